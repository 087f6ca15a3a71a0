/// Wall mode's wake policy: after how many ticks the sampler thread's next wake that counts ticks
/// comes, and how often it looks at the threads' sleeps between (`WallScheduler.lookAtSleeps`).
/// It sees only what each wake found (`WakeDoubt`) and the lengths of the sleeps that ended, so
/// it is tested without a kernel.
///
/// One tick per wake while a thread's switches were not known (its ticks would be counted with
/// the stack found at the wake); after `calmWakesToGrow` calm wakes in a row, twice as many, up to
/// the maximum. A thread's switches carry the time of each, so counting several ticks at one wake
/// loses nothing else: the wake costs the same for one tick as for ten. Between them, looks at the
/// sleeps: one per tick while a sleep ended before it could be walked, else never more than half
/// the shortest sleep seen in the last second or two apart, so that a look falls inside each sleep
/// that long.
struct WallWakePolicy {
    /// The longest the sampler sleeps between wakes when it counts several ticks per wake. A
    /// wake's sleep costs its thread 15–40 µs of CPU on this kind of virtual machine (the timer's
    /// expiry and the switch back in, measured), so a wake every 10 ms was 0.4 % of a core alone.
    static let longestWakeNanoseconds: UInt64 = 50_000_000
    /// Calm wakes (no sleep missed, every thread's switches known) before the ticks per wake double.
    static let calmWakesToGrow = 4
    /// How long a short sleep holds the wakes close together.
    static let sleepMemoryNanoseconds: UInt64 = 1_000_000_000
    /// A sleep shorter than this is over before any wake could walk it (a wake comes tens of
    /// microseconds after its tick, and a look takes several): it neither holds the wakes close
    /// nor, missed, makes a wake not calm. One such sleep, some 50 µs on a lock held a moment,
    /// kept the sampler at one wake per tick for a second or two and cost the 8-thread benchmark
    /// a tenth of its run's CPU on the sampler thread (62–76 ms in 3 s against 11 ms in cpu mode).
    static let shortestWalkableSleepNanoseconds: UInt64 = 100_000

    /// The tick.
    let intervalNanoseconds: UInt64
    /// The most ticks one wake may count.
    let maximumTicksPerWake: Int
    /// Ticks the next wake that counts ticks comes after.
    private(set) var ticksPerWake = 1
    /// Ticks between two looks at the threads' sleeps.
    private(set) var ticksPerLook = 1
    private var calmWakes = 0
    /// The shortest sleep seen in this span of `sleepMemoryNanoseconds` and in the one before
    /// (ns): a look may come after at most half of it, so that a look falls inside every such
    /// sleep and it is walked.
    private var shortestSleep: (thisSpan: UInt64, lastSpan: UInt64, spanStart: UInt64) = (.max, .max, 0)

    /// A policy for ticks `intervalNanoseconds` apart, whose wakes count at most
    /// `longestWakeNanoseconds` of ticks and at most `maximumTicksForBuffer`.
    init(intervalNanoseconds: UInt64, maximumTicksForBuffer: Int) {
        self.intervalNanoseconds = intervalNanoseconds
        maximumTicksPerWake = max(1, min(Int(Self.longestWakeNanoseconds / max(1, intervalNanoseconds)), maximumTicksForBuffer))
    }

    /// A wake that counts ticks begins at `now`: sleeps seen more than two spans ago are forgotten.
    mutating func wakeBegins(at now: UInt64) {
        if now &- shortestSleep.spanStart >= Self.sleepMemoryNanoseconds {
            shortestSleep = (.max, shortestSleep.thisSpan, now)
        }
    }

    /// A sleep of a thread whose sleeps a look mostly finds still on ended, `nanoseconds` long.
    mutating func sleepEnded(lasting nanoseconds: UInt64) {
        guard nanoseconds >= Self.shortestWalkableSleepNanoseconds else { return }
        shortestSleep.thisSpan = min(shortestSleep.thisSpan, nanoseconds)
    }

    /// The wake that counted ticks is over, with `doubt`: the next wake and look are planned.
    mutating func wakeEnded(_ doubt: WakeDoubt) {
        if doubt.unknownPlace {
            ticksPerWake = 1
            calmWakes = 0
        } else {
            calmWakes += 1
            if calmWakes >= Self.calmWakesToGrow {
                ticksPerWake = min(maximumTicksPerWake, ticksPerWake * 2)
                calmWakes = 0
            }
        }
        let shortest = min(shortestSleep.thisSpan, shortestSleep.lastSpan)
        let lookSpacing = doubt.sleepMissed ? 1 : Int(min(shortest / (2 * intervalNanoseconds), UInt64(maximumTicksPerWake)))
        ticksPerLook = max(1, min(ticksPerWake, lookSpacing))
    }
}

/// Why a wake that counted ticks could not know some tick's stack from the threads' switches.
struct WakeDoubt {
    /// A thread's place was not known (no ring, records lost, just watched): its ticks need a
    /// wake each.
    var unknownPlace = false
    /// A sleep long enough to be walked ended before a look came: looks come at every tick.
    var sleepMissed = false
}
