/// Wall mode: which threads keep a context-switch ring while there are more threads without one
/// than are looked at at every tick (`LookSubsample`), so that the rings go to the threads that
/// run. Pure decisions, tested without a kernel.
///
/// A ring makes its thread exact: its running is placed by its switches and samples, and each of
/// its sleeps is walked once. For a thread that runs, that is cheap and worth it; for one that
/// mostly sleeps in short naps it is a walk per nap (12 µs each on this project's VM: 64 threads
/// with rings among 1,000 that nap 50 ms at a time cost the sampler 16 ms of CPU a second, 1.6 %
/// of a core, a third of its time), for threads whose sleeps the subsample of looks counts
/// without bias at a fraction of that. So while the threads are subsampled:
/// - a thread with a ring that walked more sleeps than it had ticks on a core (or waiting for one)
///   in a span of `spanNanoseconds` gives its ring back, and is counted from then on as a thread
///   without a ring, its last walked stack standing for its ticks until its next look;
/// - a thread without a ring gets one (`WallScheduler.lendRing`) only if it ran at least
///   `runnerShare` of the time since its last look: a napping thread, found moved at every look,
///   would take the ring back at once.
/// With few threads (no subsample) every thread keeps its ring, and any thread that runs gets one.
struct RingKeeping {
    /// The span over which a thread's ticks on a core and walked sleeps are weighed.
    static let spanNanoseconds: UInt64 = 1_000_000_000
    /// The share of its time a thread without a ring must have run since its last look to get one.
    static let runnerShare = 0.01

    /// When this span began.
    private(set) var spanStart: UInt64 = 0

    /// Whether the span that began at `spanStart` is over at `now`: then the caller weighs each
    /// thread's span (`givesBack`), and a new span begins.
    mutating func spanEnds(at now: UInt64) -> Bool {
        guard now &- spanStart >= Self.spanNanoseconds else { return false }
        spanStart = now
        return true
    }

    /// Whether a thread with a ring gives it back, after a span of `ticksRunning` ticks on a core
    /// or waiting for one and `sleepsWalked` walks of its sleeps.
    static func givesBack(ticksRunning: Int, sleepsWalked: Int) -> Bool {
        sleepsWalked >= 2 && sleepsWalked > ticksRunning
    }

    /// Whether a thread without a ring that had `cpu` of CPU time in `elapsed` since its last
    /// look ran enough to get a ring.
    static func earnsRing(cpu: Int64, elapsed: UInt64) -> Bool {
        cpu > 0 && Double(cpu) >= runnerShare * Double(elapsed)
    }
}
