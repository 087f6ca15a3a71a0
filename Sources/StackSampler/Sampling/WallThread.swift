import CEngineHeader

/// What wall mode keeps of one thread (`WallScheduler`).
final class WallThread {
    /// Where the thread is, as its context switches say.
    enum Place: Equatable {
        case onCore
        /// Off its core, still runnable.
        case preempted
        /// Asleep since the switch out at that time (which names the sleep).
        case asleep(since: UInt64)
        /// No ring, or the kernel lost records: not known until the next switch.
        case unknown

        /// Where a thread is after `record`.
        init(_ record: ss_switch) {
            switch record.kind {
            case SS_SWITCH_IN: self = .onCore
            case SS_SWITCH_OUT_PREEMPTED: self = .preempted
            case SS_SWITCH_OUT_BLOCKED: self = .asleep(since: record.time_ns)
            default: self = .unknown
            }
        }
    }

    /// A stack of the thread at a known CPU time.
    struct Known {
        var sample: Sample
        var cpu: Int64
        /// How far in CPU time it stands for the thread: a period for a sample of the running
        /// thread (the next one comes a period of CPU time later); none for a stack walked while
        /// the thread slept (it stands for that sleep, and the code around it is sampled).
        var reach: Int64
        /// The sleep it was walked in, if any.
        var sleep: UInt64?

        /// Whether it can stand for a tick of the thread on a core or waiting for one (all the
        /// ticks that wait for a sample are). A stack walked in a sleep its switches name stands
        /// for that sleep alone: a tick on a core is after the sleep ended, in other code, however
        /// little CPU time it seems to have had since the walk. A tick's CPU time is estimated from
        /// its time on a core, which runs ahead of CPU time where the host steals time or serves
        /// interrupts (some 30 µs in 30 ms here, more while the program writes into a pipe): at
        /// 1 ms, a request's 20 ticks of rendering were counted in the database wait before it.
        var standsForRunning: Bool { sleep == nil }

        init(sample: Sample, cpu: Int64, reach: Int64) {
            self.sample = sample
            self.cpu = cpu
            self.reach = reach
        }
    }

    /// Ticks at one time, at one CPU time, whose stack is not known yet.
    struct Tick {
        var time: UInt64
        var cpu: Int64
        var ticks: Int
    }

    let tid: Int32
    var ring: OpaquePointer?
    /// Whether a ring was asked for (once: refused, or past the bound, it stays without one).
    var ringTried = false
    /// Whether it was looked at through `/proc` before.
    var lookedAt = false
    /// The round of the subsample of looks it was last drawn in (`LookSubsample`; 0: none).
    var lookRound = 0
    /// With a ring, in this span of `RingKeeping`: its ticks on a core or waiting for one, and
    /// the walks of its sleeps.
    var ticksRunningInSpan = 0
    var sleepsWalkedInSpan = 0
    /// With a ring, in this span of `RingKeeping`: the switch records taken from it.
    var switchesInSpan = 0
    /// Before this time it gets no ring: it gave one back for switching too often (`RingKeeping`).
    var noRingBefore: UInt64 = 0
    /// Its `/proc/self/task/TID/syscall`, held open from its second look on
    /// (`ss_thread_blocked_position_held`), closed as it is forgotten (`threadEnded`).
    var heldFile = Int32(SS_HELD_FILE_NONE)
    var place: Place = .unknown
    /// The thread's CPU time at the last tick that read it, -1 before.
    var cpuAtLastTick: Int64 = -1
    /// The newest known stack (set by `know`).
    private(set) var known: Known?
    /// The sleep `known` was walked in, if any (read without copying `known`).
    private(set) var knownSleep: UInt64?
    /// A sleep found woken before it was walked (`WallScheduler.look`): at its later ticks the
    /// thread is still in it, waiting for a core, its stack not known.
    var wokenFrom: UInt64?
    /// A thread without a ring walked asleep (`known`): its schedule sequence before the walk
    /// (`ss_thread_schedule_sequence`); the same later, it has not run since.
    var asleepSequence: Int64?
    /// Whether `known` has been counted once (then it is the aggregator's last stack of the thread).
    var counted = false
    /// Whether a sample of it came (a signal reached it).
    var signalled = false
    /// Before its first sample: whether it blocked the engine's signal when first asked
    /// (`WallProbes.blocksSignal`; nil before that).
    var blockedSignalBeforeSample: Bool?
    /// Whether copies of its stack at its preemptions are used (`PreemptionSnapshots`): once a
    /// sample of it came, or before, if it did not block the signal when asked. Under load the
    /// CPU-time timers' first sample of a thread can come 100-200 ms of CPU after its start, and
    /// the copies are then all that places its running (LoadedWall's first calls, cut short in
    /// about one run in six while they waited for that sample).
    var takesSignal: Bool { signalled || blockedSignalBeforeSample == false }
    /// How often a look found its sleep still on and walked it, of late (`lookWalked`): `walkable`.
    private(set) var lookSuccess = 1.0
    /// Looks `lookSuccess` has taken in, up to `lookMemory`.
    private var looksSeen = 0
    /// How many looks `lookSuccess` remembers, about: a thread that walks one sleep in three
    /// takes some 40 looks from the start value to below a half at this weight alone, several
    /// seconds of a look per tick on window_service's threads (a fifth of the first window's cost).
    private static let lookMemory = 32
    /// Whether its sleeps are mostly walked when a look comes: only then do they hold the looks
    /// close (`WallWakePolicy`). A thread whose sleeps mostly end before a look
    /// can walk them (200 µs naps, a look coming 100-200 µs after its tick on a busy machine)
    /// would cost a wake per tick for a walk in three; its sleeps' ticks are lost all the same.
    var walkable: Bool { lookSuccess >= 0.5 }
    /// Switches a look between the wakes that count ticks read from the ring, not taken in yet.
    var backlog: [ss_switch] = []
    /// The stacks of sleeps walked by such looks, oldest first (`Known.sleep` names each), for
    /// the wake that counts their ticks.
    var walkedSleeps: [Known] = []
    /// Ticks waiting for a sample, oldest first.
    var pending = FIFO<Tick>()
    /// Samples drained and not yet taken in, oldest first.
    var samples = FIFO<Known>()
    /// Ticks asleep with `known`'s stack not counted yet, the last at `owedAt`.
    private(set) var owedTicks = 0
    private(set) var owedAt: UInt64 = 0
    /// Without a ring: the time of the last tick its looks took in (or the wake before it was
    /// first seen without one); the ticks after it that no wake drew it for (`LookSubsample`) are
    /// counted at its next look (`WallScheduler.countLooked`). Nil with a ring.
    var lookedThrough: UInt64?
    /// When its ring was opened (never: `.max`).
    var watchedSince = UInt64.max
    /// When its attach began (`ss_thread_attached_at`; 0 if not known).
    var attachedSince: UInt64 = 0

    init(tid: Int32) { self.tid = tid }

    /// A look at one of its sleeps walked it (or, missed, was sure to have), or found it over:
    /// the mean of the looks so far and the start value (as one look) while they are fewer than
    /// `lookMemory`, then a moving average over about that many.
    func lookWalked(_ walked: Bool) {
        looksSeen = min(looksSeen + 1, Self.lookMemory)
        lookSuccess += ((walked ? 1 : 0) - lookSuccess) / Double(looksSeen + 1)
    }

    /// Forgets the walks of the sleeps the thread has left (every tick in them counted, or lost).
    func forgetWalkedSleepsLeft() {
        guard !walkedSleeps.isEmpty else { return }
        walkedSleeps.removeAll { place != .asleep(since: $0.sleep ?? 0) }
    }

    /// `ticks` more ticks asleep, the last at `time`.
    func owe(_ ticks: Int, at time: UInt64) {
        owedTicks += ticks
        owedAt = time
    }

    /// The owed ticks have been counted.
    func paid() { owedTicks = 0 }

    /// `stack` is the newest known stack, not counted yet.
    func know(_ stack: Known) {
        known = stack
        knownSleep = stack.sleep
        asleepSequence = nil
        counted = false
    }
}
