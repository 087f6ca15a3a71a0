/// Wall mode: which of the threads without a context-switch ring a wake looks at, when they are
/// more than the sampler can afford to look at at every tick.
///
/// Such a thread is known only by a look through the kernel (its CPU time; where it blocks, from
/// `/proc/self/task/TID/syscall`; a walk of its stack, checked after): 10–100 µs each on a virtual
/// machine, most of it in opening the file. Up to `exactThreads` of them, every one is looked at at
/// every tick, exactly. Past that, the wakes look at `looksPerSecond` of them a second in all,
/// drawn at random, uniformly and without replacement, and a thread's ticks until its next look
/// are counted, at their own times, with the stack its last look found (before its first look,
/// with what that finds). The draws do not depend on what the threads do, so the expected count of
/// every stack is the number of ticks the thread spent in it: the profile is unbiased, every tick
/// is still counted once, and what is not known is where inside the gap between two looks the
/// thread changed stack (its calls' starts and ends are known to a gap, of `threads /
/// looksPerSecond` seconds on average; the profile says how many ticks were counted so:
/// `Profile.Losses.subsampledTicks`).
struct LookSubsample {
    /// Threads without a ring looked at at every tick, at any period.
    static let exactThreads = 8
    /// Looks a second past `exactThreads`: 200 of 1,000 threads asleep 50 ms at a time (each look
    /// walks a new sleep) cost the sampler 1 % of a core on this project's 2-core virtual machine.
    static let looksPerSecond: UInt64 = 200

    /// The tick.
    let intervalNanoseconds: UInt64
    /// A permutation of the thread indices, its first ones the ones drawn at the last wake: a
    /// partial shuffle of any permutation draws a uniform subset, so it is never reset.
    private var order: [Int] = []
    private var random: Xorshift
    /// Looks owed to the ticks counted so far, in thousandths of a look (a tick at 100 Hz is worth
    /// two looks, at 1 kHz a fifth of one): a wake looks at the whole looks owed.
    private var owedMillilooks: UInt64 = 0

    /// The subsample for ticks `intervalNanoseconds` apart, drawn with `seed` (any value).
    init(intervalNanoseconds: UInt64, seed: UInt64) {
        self.intervalNanoseconds = intervalNanoseconds
        random = Xorshift(seed: seed)
    }

    /// Whether `count` threads without a ring are more than are looked at at every tick.
    func subsamples(_ count: Int) -> Bool { count > Self.exactThreads }

    /// The threads looked at by a wake that counts `ticks` ticks, among `count`: nil for every one
    /// (they are `exactThreads` or fewer), else the indices of those drawn at random: as many as
    /// the whole looks the ticks since the last draw are worth, at most all of them.
    mutating func draw(among count: Int, ticks: Int) -> ArraySlice<Int>? {
        guard subsamples(count) else { return nil }
        owedMillilooks += UInt64(max(0, ticks)) * Self.looksPerSecond * intervalNanoseconds / 1_000_000
        let looks = min(count, Int(owedMillilooks / 1000))
        // Every thread looked at: no debt carried beyond them.
        owedMillilooks = looks == count ? 0 : owedMillilooks - UInt64(looks) * 1000
        if order.count != count { order = Array(0..<count) }
        for slot in 0..<looks {
            order.swapAt(slot, slot + Int(random.next() % UInt64(count - slot)))
        }
        return order[0..<looks]
    }

    /// The xorshift64* generator: cheap, no system call per draw.
    struct Xorshift {
        private var state: UInt64

        /// A generator started from `seed` (mixed: any seed, zero included, gives a good start).
        init(seed: UInt64) {
            var mixed = seed &+ 0x9E37_79B9_7F4A_7C15
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            state = (mixed ^ (mixed >> 31)) | 1
        }

        /// The next draw.
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 0x2545_F491_4F6C_DD1D
        }
    }
}
