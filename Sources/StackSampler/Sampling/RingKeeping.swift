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
///
/// Whatever the threads' number, a ring costs its thread at every switch: the kernel switches
/// the thread's perf context out and in and writes the record, about 2 µs a switch on this
/// project's VM, where a switch alone costs 2.4 (`Scripts/probes/switch_ring_cost_probe.c`: two
/// threads handing a token on one core took 2.4 times as long under wall 1 ms as root). So a
/// thread whose ring brings more than a span's worth of `maximumSwitchesPerSecond` records within
/// a span gives it back at once, whatever its state, and gets none again for
/// `refusalNanoseconds`: it is then counted as a thread without a ring, as where
/// `perf_event_open` is refused, looked at through `/proc`.
struct RingKeeping {
    /// The span over which a thread's ticks on a core and walked sleeps are weighed.
    static let spanNanoseconds: UInt64 = 1_000_000_000
    /// The share of its time a thread without a ring must have run since its last look to get one.
    static let runnerShare = 0.01
    /// Switch records a second above which a thread gives its ring back: at about 2 µs each, 1 %
    /// of the thread's time, the budget of wall mode's cost beyond a sampling signal's. A thread
    /// that naps 200 µs between spins of 300 µs (4,000 records a second) keeps its ring; one
    /// that hands work to another every 20 µs (20,000) gives it back.
    static let maximumSwitchesPerSecond = 5_000
    /// How long a thread that gave its ring back for its switches gets none again: it may have
    /// changed by then, and a span of its switches costs it again at most a tenth of the time.
    static let refusalNanoseconds: UInt64 = 10_000_000_000

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

    /// Whether a thread whose ring brought `switches` records so far in this span switches too
    /// often to keep it.
    static func switchesTooOften(_ switches: Int) -> Bool {
        UInt64(switches) * 1_000_000_000 > UInt64(maximumSwitchesPerSecond) * spanNanoseconds
    }

    /// Whether a thread without a ring that had `cpu` of CPU time in `elapsed` since its last
    /// look ran enough to get a ring.
    static func earnsRing(cpu: Int64, elapsed: UInt64) -> Bool {
        cpu > 0 && Double(cpu) >= runnerShare * Double(elapsed)
    }
}
