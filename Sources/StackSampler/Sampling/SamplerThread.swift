import CEngine
import Glibc
import Synchronization

/// The profiler's own thread: drains the engine's buffer every few milliseconds,
/// discovers new and exited threads (attaching and detaching their timers) and,
/// in wall mode, sends the samples on an absolute schedule.
final class SamplerThread: @unchecked Sendable {
    /// How often /proc/self/task is read: threads created with pthread_create are attached by
    /// the hook before they run, so the scan finds the others and the ones that exited.
    private static let scanIntervalNanoseconds: UInt64 = 100_000_000
    /// CPU time a thread can use without having moved: returning from the handler into the call
    /// it was in. More than that, and it is looked at again (signalled, or walked if blocked).
    private static let unmovedNanoseconds: Int64 = 5_000
    /// How long a mostly sleeping thread caught running is looked at again before it is signalled (see `tick`).
    private static let sleeperPatienceNanoseconds: UInt64 = 250_000
    /// A signal whose sample has not arrived by then is taken as lost (dropped, or a thread that blocks it).
    private static let outstandingSignalNanoseconds: UInt64 = 100_000_000
    /// In cpu mode the sampler only drains, as seldom as the buffer allows: CPU timers fire at
    /// most `rate` times per CPU-second, so all cores together fill it at most at cores x rate
    /// samples a second (rate capped at 1000, the fastest scheduler tick). The buffer is drained
    /// when a quarter full at that pace, at most every 100 ms (every 100 ms on 2 cores at
    /// 100 Hz with the default 1024 slots; 40 ms on 64 cores), and at least every 5 ms.
    private static func cpuModeDrainInterval(_ configuration: ProfilerConfiguration) -> UInt64 {
        let cores = UInt64(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let rate = min(1000, 1_000_000_000 / max(1, configuration.periodNanoseconds))
        let quarterFull = UInt64(configuration.bufferSlots) * 1_000_000_000 / (4 * cores * max(1, rate))
        return min(100_000_000, max(5_000_000, quarterFull))
    }
    /// How often each thread's signal mask is checked (a thread that blocks the signal is never sampled).
    private static let maskCheckIntervalNanoseconds: UInt64 = 500_000_000

    /// The session's settings.
    let configuration: ProfilerConfiguration
    private let stopRequested = Atomic<Bool>(false)
    private let ownTID = Atomic<Int32>(0)
    /// A thread of the profiler's own besides this one (the one that ends a `capture`), never attached.
    private let helperTID = Atomic<Int32>(0)
    /// Held by the sampler thread while it drains and ticks, and by `snapshot`: the buffer has
    /// one reader at a time, and the counts are read whole.
    private let loopLock = Mutex<Void>(())
    /// Touched only under `loopLock` until the sampler thread has been joined.
    private var aggregator = StackAggregator()
    /// The live stream of the session, when a recording path is configured.
    private var stream: RawStreamWriter?
    /// Invocation tracking, when configured.
    private(set) var invocations: InvocationRecorder?
    /// Wall mode: each thread's CPU time when its stack was last known (the end of its last
    /// sample's handler, or a tick that found it unchanged).
    private var cpuWhenStackKnown: [Int32: Int64] = [:]
    /// Wall mode: each thread's CPU time, and the time, when a tick last looked at where it was.
    private var cpuAtLastTick: [Int32: (cpu: Int64, at: UInt64)] = [:]
    /// Wall mode: a signal sent and its sample not yet arrived (never two at once), and the ticks
    /// that passed meanwhile. The thread cannot move before its handler runs, so those ticks
    /// are owed to the stack that sample will carry.
    private struct OutstandingSignal {
        var sentAt: UInt64
        var owedTicks = 0
    }
    private var signalOutstanding: [Int32: OutstandingSignal] = [:]
    private var lastMaskCheck: UInt64 = 0
    /// Samples each thread had taken at its last mask check: a thread that took some since
    /// evidently receives the signal, and its mask is not read (a /proc status read is slow).
    private var takenAtMaskCheck: [Int32: Int] = [:]
    /// Threads the last scan found alive but not attached. A thread made with pthread_create
    /// attaches itself, microseconds after it appears in /proc; one attached by a scan before
    /// that can be sampled in its start-up code, where its root frames are not yet whole
    /// (measured: the churn test's whole-root share fell below 99 % without this rule). So a scan
    /// attaches only the threads the scan before it already found unattached.
    private var unattachedAtLastScan: Set<Int32> = []
    /// Wall mode: walks the stacks of threads blocked in a system call, without a signal.
    private lazy var blockedWalker = BlockedThreadWalker(maxDepth: configuration.maxDepth)
    /// The sampler's own thread.
    private var handle = pthread_t()
    /// Monotonic time the session started, in ns.
    private(set) var startTime: UInt64 = 0
    /// Wall-mode ticks this thread woke too late for (counted with the stacks found then).
    private(set) var missedTicks = 0
    /// Wall-mode ticks of a thread whose stack could not be known without risk (see `Profile.Losses.skippedTicks`).
    private(set) var skippedTicks = 0
    /// Engine counters when the session started (they run for the life of the process).
    private(set) var handlerTimingAtStart = HandlerTiming.snapshot()
    private(set) var droppedAtStart: UInt64 = 0
    private(set) var foreignSignalsAtStart: UInt64 = 0
    private(set) var asyncStacksAtStart = Profile.AsyncStacks()
    /// CPU time the sampler thread used, in ns.
    private(set) var ownCPUNanoseconds: UInt64 = 0

    init(configuration: ProfilerConfiguration) {
        self.configuration = configuration
    }

    /// Attaches the existing threads and starts the loop on a new thread.
    func start() throws(ProfilerError) {
        startTime = ss_now_ns()
        handlerTimingAtStart = HandlerTiming.snapshot()
        droppedAtStart = ss_buffer_dropped()
        foreignSignalsAtStart = ss_engine_foreign_signals()
        asyncStacksAtStart = Profile.AsyncStacks.engine()
        ss_async_stacks_enable(configuration.asyncStacks ? 1 : 0)
        if let path = configuration.recordingPath {
            stream = try RawStreamWriter(path: path)
            stream?.begin(configuration: configuration, startNanoseconds: startTime)
        }
        if let settings = configuration.invocations {
            invocations = try InvocationRecorder(settings: settings, period: configuration.periodNanoseconds, mode: configuration.mode)
        }
        scanThreads(initial: true)
        ss_sampler_sleep_reset()
        ss_sampler_arriving()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = ss_spawn_unsampled_thread(&handle, { context in
            let sampler = Unmanaged<SamplerThread>.fromOpaque(context!).takeRetainedValue()
            sampler.run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<SamplerThread>.fromOpaque(context).release()
            ss_sampler_leaving()
            throw .invalidConfiguration("cannot start the sampler thread: \(String(cString: strerror(status)))")
        }
    }

    /// Stops the loop, disarms the engine and returns everything counted.
    func finish() -> StackAggregator {
        stopRequested.store(true, ordering: .releasing)
        ss_sampler_wake()
        pthread_join(handle, nil)
        ss_engine_stop()
        drain()
        invocations?.reportStalls(threads: aggregator.threads)
        invocations?.finish()
        stream?.end(durationNanoseconds: ss_now_ns() &- startTime, threads: aggregator.threads, losses: losses(aggregator))
        let now = ss_now_ns()
        let own = [ownTID.load(ordering: .relaxed), helperTID.load(ordering: .relaxed)]
        for tid in ThreadDirectory.threadIDs() where !own.contains(tid) {
            aggregator.observe(tid, cpu: ss_thread_cpu_time_ns(tid), name: nil, bornDuringSession: true, at: now)
        }
        return aggregator
    }

    /// What has been counted so far, with the buffer drained first, while sampling goes on.
    func snapshot() -> (counted: StackAggregator, losses: Profile.Losses) {
        loopLock.withLock { _ in
            drain()
            return (aggregator, losses(aggregator))
        }
    }

    /// Keeps the calling thread, one of the profiler's own, out of the session.
    func excludeCurrentThread() {
        ss_thread_exclude_current()
        helperTID.store(ss_current_tid(), ordering: .relaxed)
        ss_thread_detach(ss_current_tid())
    }

    /// The losses of this session, from the sampler's counts and the engine's counters.
    func losses(_ counted: StackAggregator) -> Profile.Losses {
        Profile.Losses(droppedSamples: Int(ss_buffer_dropped() - droppedAtStart), truncatedSamples: counted.truncatedSamples,
                       leafOnlySamples: counted.leafOnlySamples, unwindFailures: counted.unwindFailures,
                       unwindFaults: counted.unwindFaults, missedTicks: missedTicks, skippedTicks: skippedTicks, overrunPeriods: counted.overrunPeriods,
                       foreignSignals: Int(ss_engine_foreign_signals() - foreignSignalsAtStart))
    }

    /// Parks at `ss_sampler_park_point()` while a fork is under way: there it holds no lock
    /// (Swift runtime, loader, engine) that the child would find held for ever.
    private func run() {
        defer { ss_sampler_leaving() }
        ss_sampler_park_point()
        ss_thread_exclude_current()
        ss_engine_sampler_starting()
        // In chunks: a stop that comes first does not wait for the rest (they fault in on first use).
        while !stopRequested.load(ordering: .acquiring), ss_buffer_prefault_next() != 0 {}
        ownTID.store(ss_current_tid(), ordering: .relaxed)
        let interval = configuration.mode == .wall ? configuration.periodNanoseconds : Self.cpuModeDrainInterval(configuration)
        var nextWake = ss_now_ns() + interval
        var lastScan = ss_now_ns()
        while !stopRequested.load(ordering: .acquiring) {
            let woken = ss_sampler_sleep_until(nextWake)
            if woken == Int32(SS_WOKEN_TO_STOP) { break }
            ss_sampler_park_point()
            if woken == Int32(SS_WOKEN_TO_REFRESH) {
                // A module was closed: serve handlers the new list now, then sleep on to the tick.
                ss_module_cache_refresh()
                continue
            }
            let now = ss_now_ns()
            // Ticks due since the last one: more than one when this thread was kept off the CPU.
            let due = now >= nextWake ? Int((now - nextWake) / interval) + 1 : 1
            ss_module_cache_refresh()
            loopLock.withLock { _ in
                drain()
                if now &- lastScan >= Self.scanIntervalNanoseconds {
                    scanThreads(initial: false)
                    lastScan = now
                } else if configuration.mode == .cpu {
                    // Keep CPU times current between scans: a thread that exits takes its last reading with it.
                    for tid in attachedThreads() { aggregator.observeCPU(tid, cpu: ss_thread_cpu_time_ns(tid)) }
                }
                if configuration.mode == .wall {
                    tick(at: now, due: due)
                    missedTicks += due - 1
                }
                stream?.flushIfDue(now: now, threads: aggregator.threads, losses: losses(aggregator))
                invocations?.reportStalls(threads: aggregator.threads)
            }
            nextWake += UInt64(due) * interval
        }
        ownCPUNanoseconds = UInt64(max(0, ss_thread_cpu_time_ns(ss_current_tid())))
    }

    private func drain() {
        while let sample = ss_buffer_peek() {
            consume(sample, owedTicks: signalOutstanding.removeValue(forKey: sample.pointee.tid)?.owedTicks ?? 0)
            ss_buffer_advance()
        }
    }

    /// Hands one sample to every consumer; in wall mode it also stands for `owedTicks` more ticks.
    private func consume(_ sample: UnsafePointer<ss_sample>, owedTicks: Int) {
        let tid = sample.pointee.tid
        let stack = aggregator.record(sample)
        if sample.pointee.cpu_ns >= 0 { cpuWhenStackKnown[tid] = sample.pointee.cpu_ns }
        for _ in 0..<max(1, Int(sample.pointee.periods)) { stream?.sample(stack, at: sample.pointee.time_ns, threads: aggregator.threads) }
        invocations?.record(sample, thread: stack.thread)
        repeatLast(tid, at: sample.pointee.time_ns, times: owedTicks)
    }

    /// Counts the last stack of `tid` `times` more (ticks it stood for without a new sample).
    private func repeatLast(_ tid: Int32, at now: UInt64, times: Int) {
        for _ in 0..<times {
            guard let stack = aggregator.repeatLast(tid, at: now) else { return }
            stream?.sample(stack, at: now, threads: aggregator.threads)
            invocations?.repeatLast(thread: stack.thread, at: now)
        }
    }

    /// Attaches threads that appeared, detaches those that exited, refreshes names and CPU times.
    private func scanThreads(initial: Bool) {
        let now = ss_now_ns()
        let own = [ownTID.load(ordering: .relaxed), helperTID.load(ordering: .relaxed)]
        let live = Set(ThreadDirectory.threadIDs()).subtracting(own)
        let attached = Set(attachedThreads())
        let unattached = live.subtracting(attached)
        for tid in unattached where initial || unattachedAtLastScan.contains(tid) { _ = ss_thread_attach(tid, 0) }
        unattachedAtLastScan = initial ? [] : unattached
        // Threads created through pthread_create detach themselves as they end: they are known
        // to the aggregator only.
        // A tid reused before this scan by a thread that bypassed the pthread_create hook still
        // has the exited thread's timer, which never fires: the new thread starts afresh.
        let reused = configuration.mode == .cpu ? attached.intersection(live).filter { ss_thread_timer_orphaned($0) != 0 } : []
        for tid in attached.union(aggregator.liveThreadIDs).subtracting(live).union(reused) {
            ss_thread_detach(tid)
            if let thread = aggregator.threadEnded(tid) { invocations?.threadEnded(thread: thread) }
            cpuWhenStackKnown[tid] = nil
            cpuAtLastTick[tid] = nil
            takenAtMaskCheck[tid] = nil
            signalOutstanding[tid] = nil
        }
        for tid in reused { _ = ss_thread_attach(tid, 1) }
        let checkMasks = now &- lastMaskCheck >= Self.maskCheckIntervalNanoseconds
        if checkMasks { lastMaskCheck = now }
        for tid in live {
            let cpu = ss_thread_cpu_time_ns(tid)
            guard cpu >= 0 else { continue }
            aggregator.observe(tid, cpu: cpu, name: ThreadDirectory.name(of: tid), bornDuringSession: !initial, at: now)
            if checkMasks { checkMask(tid, at: now) }
        }
    }

    /// Notes whether `tid` blocks the signal, unless it took samples since its last check.
    private func checkMask(_ tid: Int32, at now: UInt64) {
        let taken = aggregator.takenSamples(tid)
        if let taken, let before = takenAtMaskCheck[tid], taken > before {
            takenAtMaskCheck[tid] = taken
            aggregator.noteSignalBlocked(tid, false, at: now)
            return
        }
        takenAtMaskCheck[tid] = taken ?? 0
        if let blocked = ThreadDirectory.blocks(tid, signal: ss_engine_signal()) {
            aggregator.noteSignalBlocked(tid, blocked, at: now)
        }
    }

    /// Reused by every tick, rather than an array allocated per tick.
    private var attachedBuffer = [Int32](repeating: 0, count: 256)

    private func attachedThreads() -> ArraySlice<Int32> {
        while true {
            let count = ss_thread_list(&attachedBuffer, attachedBuffer.count)
            if count <= attachedBuffer.count { return attachedBuffer[0..<count] }
            attachedBuffer = [Int32](repeating: 0, count: count * 2)
        }
    }

    /// Wall mode: one sample of every attached thread. A thread that used (next to) no CPU since
    /// its stack was last known has not moved: its last stack is counted again. One blocked in a
    /// system call is never signalled (the signal would end a sleep or poll early with EINTR):
    /// its stack is walked from where the kernel shows it blocked (`BlockedThreadWalker`). Only a
    /// running thread is signalled, unless its last signal has not produced its sample yet.
    /// `due` ticks are counted: more than one after a late wake, each with the stack found now.
    private func tick(at now: UInt64, due: Int) {
        for tid in attachedThreads() {
            // A stop asked for meanwhile: the thread that asked waits in `finish` for this one,
            // and its stack there is the profiler's own, not the program's.
            if stopRequested.load(ordering: .acquiring) { return }
            if let sent = signalOutstanding[tid]?.sentAt, now &- sent < Self.outstandingSignalNanoseconds {
                signalOutstanding[tid]?.owedTicks += due
                continue
            }
            let cpu = ss_thread_cpu_time_ns(tid)
            guard cpu >= 0 else { continue }
            let before = cpuAtLastTick.updateValue((cpu, now), forKey: tid)
            if let known = cpuWhenStackKnown[tid], aggregator.hasStack(tid), cpu - known < Self.unmovedNanoseconds {
                cpuWhenStackKnown[tid] = cpu
                repeatLast(tid, at: now, times: due)
                continue
            }
            // A thread that ran less than half the time since it was last looked at mostly sleeps:
            // caught running, it is most likely on its way into or out of a sleep (in the kernel,
            // where a signal would end that sleep with EINTR). It is looked at again for up to
            // 250 us, and walked once it blocks. One that ran less than a twentieth of the time
            // (or is first seen now) is in the kernel nearly all the time it runs: it is never
            // signalled, and a tick that finds it running to the end is skipped and counted.
            // Over a period at least: two looks close together (a late sampler catching up)
            // would make a few microseconds in the kernel look like a busy thread.
            let share = before.map { Double(cpu - $0.cpu) / Double(max(configuration.periodNanoseconds, now &- $0.at)) } ?? 0
            let sleeper = share < 0.5
            let quiet = share < 0.05
            switch look(at: tid, cpu: cpu, now: now, patience: sleeper ? Self.sleeperPatienceNanoseconds : 0, maySignal: !quiet) {
            case .running: signal(tid, at: now, due: due)
            case .walked:
                if stopRequested.load(ordering: .acquiring) { return }
                consume(blockedWalker.sample, owedTicks: due - 1)
            case .unsettled, .waking: skippedTicks += due
            case .gone: break
            }
        }
    }

    /// Looks at a thread, and while it runs, again every 10 us (plus timer slack) until
    /// `patience` ns have passed; the sampler sleeps in between, leaving the core to the thread.
    /// A thread looked at with patience that still runs at the end is `.waking` (runnable inside
    /// the system call it is leaving, which a signal could end with EINTR) unless it `maySignal`
    /// and is on a core at that moment (its CPU time moves across one more look).
    private func look(at tid: Int32, cpu: Int64, now: UInt64, patience: UInt64, maySignal: Bool) -> BlockedThreadWalker.Look {
        var found = blockedWalker.look(at: tid, cpu: cpu, now: now)
        while case .running = found, ss_now_ns() &- now < patience {
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000)
            nanosleep(&pause, nil)
            let moved = ss_thread_cpu_time_ns(tid)
            guard moved >= 0 else { return .gone }
            found = blockedWalker.look(at: tid, cpu: moved, now: now)
        }
        guard case .running = found, patience > 0 else { return found }
        guard maySignal else { return .waking }
        let before = ss_thread_cpu_time_ns(tid)
        guard let position = BlockedThreadWalker.position(of: tid) else {
            return ss_thread_cpu_time_ns(tid) > before ? .running : .waking
        }
        return position == nil ? .gone : .waking
    }

    /// Signals `tid` for a sample that stands for `due` ticks.
    private func signal(_ tid: Int32, at now: UInt64, due: Int) {
        if ss_signal_thread(tid) == 0 {
            signalOutstanding[tid] = OutstandingSignal(sentAt: now, owedTicks: due - 1)
        }
    }
}
