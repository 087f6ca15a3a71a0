import CEngineHeader
import Glibc

/// Finds the threads of the process under /proc/self/task: attaches the new ones (their
/// timers or counters), detaches those that exited, and keeps names, CPU times and signal
/// masks current in the aggregator.
struct ThreadScan {
    /// How often each thread's signal mask is checked (a thread that blocks the signal is never
    /// sampled), and its name read again (a new thread's is read when first seen): each is a
    /// /proc file per thread, most of a scan's cost.
    private static let maskCheckIntervalNanoseconds: UInt64 = 500_000_000

    /// Threads the last scan found alive but not attached. A thread made with pthread_create
    /// attaches itself, microseconds after it appears in /proc; one attached by a scan before
    /// that can be sampled in its start-up code, where its root frames are not yet whole
    /// (measured: the churn test's whole-root share fell below 99 % without this rule). So a scan
    /// attaches only the threads the scan before it already found unattached.
    private var unattachedAtLastScan: Set<Int32> = []
    private var lastMaskCheck: UInt64 = 0
    /// Names read again per mask check at most, in turn, from `nameTurn` on in the threads' list:
    /// a thread's name is read when it is first seen, and a later rename (pthread_setname_np) is
    /// found within `threads / namesPerCheck` checks. Every thread's name at every check cost
    /// 1,000 threads asleep 1 % of a core (a /proc file each).
    private static let namesPerCheck = 64
    private var nameTurn = 0
    /// Each thread at its last mask read (or check that found it sampled): the samples it had
    /// taken (a thread that took some since evidently receives the signal) and its CPU time. Its
    /// mask is read again only once it has run a sample's worth of CPU time since
    /// (`sampleCPUNanoseconds`) without a sample: less would have brought no sample anyway, and a
    /// /proc status read is slow (1,000 threads that sleep 50 ms at a time, each waking a few
    /// microseconds, had theirs read at every mask check: 60 % of the sampler thread's CPU in
    /// cpu mode).
    private var atMaskCheck: [Int32: (taken: Int, cpu: Int64)] = [:]
    /// The CPU time between two samples of a running thread (the period), or 0 when samples count
    /// events: then a thread's mask is read whenever it has run since.
    private let sampleCPUNanoseconds: Int64

    /// A scan for a session whose running threads are sampled every `sampleCPUNanoseconds` of
    /// their CPU time (0 if not by CPU time).
    init(sampleCPUNanoseconds: Int64) {
        self.sampleCPUNanoseconds = sampleCPUNanoseconds
    }
    /// Threads whose last mask read said they block the signal, not yet believed: read again at
    /// the next scan, and only then is the thread's sampling stopped.
    private var maskSuspects: Set<Int32> = []
    /// Reused by every call, rather than an array allocated per tick.
    private var attachedBuffer = [Int32](repeating: 0, count: 256)
    /// Threads a scan attached. The others were attached by the pthread_create hook and detach
    /// themselves as they end, so their tid can come back only with a timer of its own: only
    /// these need the orphaned-timer check at every scan (a descriptor's fstat and ioctl for
    /// each); every thread gets it every `fullOrphanCheckNanoseconds`, for a hooked thread that
    /// could not detach (the program took every pthread key, or left by a raw exit).
    private var attachedByScan: Set<Int32> = []
    private static let fullOrphanCheckNanoseconds: UInt64 = 2_000_000_000
    private var lastFullOrphanCheck: UInt64 = 0
    /// The attached threads and the process's thread count after the last scan, and when it was:
    /// while both stay the same, a scan could find only a thread made without pthread_create that
    /// replaced another such one, so it is done only every `quietScanNanoseconds`.
    private var afterLastScan: (attached: [Int32], threadCount: Int, time: UInt64) = ([], -1, 0)
    private static let quietScanNanoseconds: UInt64 = 1_000_000_000

    /// The threads a scan attached (made without pthread_create): with the main thread, those whose
    /// end leaves no note of their last CPU time (`ss_ended_thread`).
    var threadsAttachedByScan: Set<Int32> { attachedByScan }

    /// The threads the engine samples now.
    mutating func attachedThreads() -> ArraySlice<Int32> {
        while true {
            let count = ss_thread_list(&attachedBuffer, attachedBuffer.count)
            if count <= attachedBuffer.count { return attachedBuffer[0..<count] }
            attachedBuffer = [Int32](repeating: 0, count: count * 2)
        }
    }

    /// Whether a scan at `now` may find a thread that started or ended, or is due anyway: the
    /// attached threads (the pthread_create hook attaches and detaches them) or the process's
    /// thread count (`Threads:` in /proc/self/status, one read) changed since the last scan, or
    /// a thread a scan attached (made without pthread_create, which does not detach itself) has
    /// ended: its timer or counter is orphaned (`ss_thread_timer_orphaned`: a system call or
    /// three each), whether or not another such thread has taken its tid since, or the last scan
    /// found threads it did not attach yet (the next one attaches them). A scan lists
    /// /proc/self/task and reads every thread's CPU time: with 100 threads asleep, scans every
    /// 100 ms were a quarter of the sampler thread's work in wall mode, and in redis, whose
    /// jemalloc starts its 4 background threads without the hook, scans were due at every
    /// chance while such threads lived: 14 % of the sampler thread's CPU.
    mutating func mayFindChanges(at now: UInt64) -> Bool {
        now &- afterLastScan.time >= Self.quietScanNanoseconds || !maskSuspects.isEmpty || !unattachedAtLastScan.isEmpty
            || attachedThreads().sorted() != afterLastScan.attached || ThreadDirectory.threadCount() != afterLastScan.threadCount
            || attachedByScan.contains { ss_thread_timer_orphaned($0) != 0 }
    }

    /// Attaches threads that appeared (all of them if `initial`), detaches those that exited
    /// and updates the figures of the live ones; `own` are the profiler's threads, never
    /// attached; `ending` is told of each thread that ended before `routing` forgets it.
    /// Returns the threads that ended, already detached.
    mutating func scan(initial: Bool, own: Set<Int32>, at now: UInt64, routing: inout SampleRouting,
                       ending: (Int32, inout SampleRouting) -> Void = { _, _ in }) -> [Int32] {
        let listed = ThreadDirectory.threadIDs()
        var live = Set(listed).subtracting(own)
        if ss_main_thread_ended() != 0 { live.remove(getpid()) } // a zombie since its pthread_exit
        let attached = Set(attachedThreads())
        let unattached = live.subtracting(attached)
        for tid in unattached where initial || unattachedAtLastScan.contains(tid) {
            _ = ss_thread_attach(tid, 0)
            noteAttachedByScan(tid)
        }
        unattachedAtLastScan = initial ? [] : unattached
        // Threads created through pthread_create detach themselves as they end: they are known
        // to the aggregator only.
        // A tid reused before this scan by a thread that bypassed the pthread_create hook still
        // has the exited thread's timer, which never fires: the new thread starts afresh.
        let checkAll = now &- lastFullOrphanCheck >= Self.fullOrphanCheckNanoseconds
        if checkAll { lastFullOrphanCheck = now }
        let reused = (checkAll ? attached : attachedByScan.intersection(attached)).intersection(live).filter { ss_thread_timer_orphaned($0) != 0 }
        let ended = Array(attached.union(routing.aggregator.liveThreadIDs).subtracting(live).union(reused))
        for tid in ended {
            ss_thread_detach(tid)
            ending(tid, &routing)
            routing.threadEnded(tid)
            atMaskCheck[tid] = nil
            maskSuspects.remove(tid)
            attachedByScan.remove(tid)
        }
        for tid in reused {
            _ = ss_thread_attach(tid, 1)
            noteAttachedByScan(tid)
        }
        let checkMasks = now &- lastMaskCheck >= Self.maskCheckIntervalNanoseconds
        var renamed: Set<Int32> = []
        if checkMasks { lastMaskCheck = now }
        if checkMasks, !listed.isEmpty {
            for step in 0..<min(Self.namesPerCheck, listed.count) { renamed.insert(listed[(nameTurn + step) % listed.count]) }
            nameTurn = (nameTurn + Self.namesPerCheck) % listed.count
        }
        routing.updateThreads { aggregator in
            for tid in live {
                let cpu = ss_thread_cpu_time_ns(tid)
                guard cpu >= 0 else { continue }
                aggregator.observe(tid, cpu: cpu, name: renamed.contains(tid) ? ThreadDirectory.name(of: tid) : nil, bornDuringSession: !initial, at: now)
                if checkMasks || maskSuspects.contains(tid) {
                    checkMask(tid, cpu: cpu, at: now, aggregator: &aggregator)
                } else if ss_thread_signal_blocked(tid) != 0 {
                    // Between mask reads, what the interposed mask calls saw (a thread that blocks
                    // the signal for less than a mask interval is still named in the summary).
                    aggregator.noteSignalBlocked(tid, true, at: now)
                }
            }
        }
        afterLastScan = (attachedThreads().sorted(), listed.count, now)
        return ended
    }

    /// Notes that a scan attached `tid`: its end and a successor on its tid are for scans to
    /// find. Not the main thread: its tid is the process's, taken by no other thread while the
    /// process lives (a preloaded program's main thread, attached by the first scan, kept every
    /// scan due at once, and a scan reads every thread's CPU time).
    private mutating func noteAttachedByScan(_ tid: Int32) {
        if tid != getpid() { attachedByScan.insert(tid) }
    }

    /// Notes whether `tid` (at CPU time `cpu`) blocks the signal, unless it took samples since its
    /// last check, or has not run a sample's worth of CPU time since its last mask read.
    private mutating func checkMask(_ tid: Int32, cpu: Int64, at now: UInt64, aggregator: inout StackAggregator) {
        let taken = aggregator.takenSamples(tid)
        let before = atMaskCheck[tid]
        if let taken, let before, taken > before.taken {
            atMaskCheck[tid] = (taken, cpu)
            maskSuspects.remove(tid)
            aggregator.noteSignalBlocked(tid, false, at: now)
            return
        }
        if let before, !maskSuspects.contains(tid), cpu == before.cpu || cpu - before.cpu < sampleCPUNanoseconds { return }
        atMaskCheck[tid] = (taken ?? 0, cpu)
        if let blocked = ThreadDirectory.blocks(tid, signal: ss_engine_signal()) {
            // Blocked at one read may be the engine's own handler running (the signal is blocked
            // while it runs), on a thread kept off its core there: believed at the next read.
            if blocked, maskSuspects.insert(tid).inserted, ss_thread_signal_blocked(tid) == 0 { return }
            maskSuspects.remove(tid)
            aggregator.noteSignalBlocked(tid, blocked, at: now)
            // A mask changed behind the engine's interposers: the engine stops (or resumes) its
            // timer or signals for the thread here.
            ss_thread_note_signal_blocked(tid, blocked ? 1 : 0)
        }
    }
}
