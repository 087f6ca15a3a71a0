/// Wall mode: which of the threads without a context-switch ring a wake looks at, when they are
/// more than the sampler can afford to look at at every tick.
///
/// Such a thread is known only by a look through the kernel (its CPU time; where it blocks, from
/// `/proc/self/task/TID/syscall`; a walk of its stack, checked after): 10–100 µs each on a virtual
/// machine, most of it in opening the file. Up to `exactThreads` of them, every one is looked at at
/// every tick, exactly. Past that, the wakes look at `looksPerSecond` of them a second in all, in
/// rounds: each round looks at every thread once, in an order drawn at random (uniformly, without
/// replacement, among the threads not looked at yet in the round), and a thread's ticks until its
/// next look are counted, at their own times, with the stack its last look found (before its first
/// look, with what that finds). The draws do not depend on what the threads do, so the expected
/// count of every stack is the number of ticks the thread spent in it: the profile is unbiased,
/// every tick is still counted once, and what is not known is where inside the gap between two
/// looks the thread changed stack (its calls' starts and ends are known to a gap, of `threads /
/// looksPerSecond` seconds on average and at most two rounds; the profile says how many ticks were
/// counted so: `Profile.Losses.subsampledTicks`). Rounds, not independent draws: with draws alone a
/// third of 1,000 threads had no look at all in a 5 s profile (200 looks a second), and their
/// ticks were lost; in rounds every thread has its first look within one round.
struct LookSubsample {
    /// Threads without a ring looked at at every tick, at any period.
    static let exactThreads = 8
    /// Looks a second past `exactThreads`: 200 of 1,000 threads asleep 50 ms at a time (each look
    /// walks a new sleep) cost the sampler 1 % of a core on this project's 2-core virtual machine.
    static let looksPerSecond: UInt64 = 200

    /// The tick.
    let intervalNanoseconds: UInt64
    /// The round the looks are in (from 1): a thread looked at in it waits for the next.
    private var round = 1
    /// How many threads are drawn among (`threadsChanged`).
    private var count = 0
    /// The indices of the threads not looked at yet in this round, in no order that matters.
    private var waiting: [Int] = []
    private var random: Xorshift
    /// Looks owed to the ticks counted so far, in thousandths of a look (a tick at 100 Hz is worth
    /// two looks, at 1 kHz a fifth of one): a wake looks at the whole looks owed.
    private var owedMillilooks: UInt64 = 0

    /// The subsample for ticks `intervalNanoseconds` apart, drawn with `seed` (any value).
    init(intervalNanoseconds: UInt64, seed: UInt64) {
        self.intervalNanoseconds = intervalNanoseconds
        random = Xorshift(seed: seed)
    }

    /// The threads without a ring are now `count`, by index; `lastRound(index)` is the round that
    /// thread was last drawn in (0: none), so that a thread seen before keeps its place in the
    /// round and a new one waits for its look in it.
    mutating func threadsChanged(count: Int, lastRound: (Int) -> Int) {
        self.count = count
        waiting = (0..<count).filter { lastRound($0) != round }
        if waiting.isEmpty { startRound() }
    }

    /// The threads looked at by a wake that counts `ticks` ticks: nil for every one (they are
    /// `exactThreads` or fewer), else the indices of those drawn at random among the ones this
    /// round has not looked at yet: as many as the whole looks the ticks since the last draw are
    /// worth, up to the rest of the round (a draw never spans two rounds: the next wake begins
    /// the next one), and the round they were drawn in, for the caller to note in each thread
    /// drawn (the `lastRound` of a later `threadsChanged`).
    mutating func draw(ticks: Int) -> (indices: [Int], round: Int)? {
        guard count > Self.exactThreads else { return nil }
        owedMillilooks += UInt64(max(0, ticks)) * Self.looksPerSecond * intervalNanoseconds / 1_000_000
        let looks = min(waiting.count, Int(owedMillilooks / 1000))
        // Every thread looked at in one wake: no debt carried beyond them.
        owedMillilooks = looks == count ? 0 : owedMillilooks - UInt64(looks) * 1000
        var drawn: [Int] = []
        drawn.reserveCapacity(looks)
        for _ in 0..<looks {
            let slot = Int(random.next() % UInt64(waiting.count))
            drawn.append(waiting[slot])
            waiting.swapAt(slot, waiting.count - 1)
            waiting.removeLast()
        }
        let drawnRound = round
        if waiting.isEmpty { startRound() }
        return (drawn, drawnRound)
    }

    /// Every thread waits for its look again.
    private mutating func startRound() {
        round += 1
        waiting = Array(0..<count)
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
