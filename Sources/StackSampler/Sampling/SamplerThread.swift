import CEngineHeader
import Glibc
import Synchronization

/// The profiler's own thread: drains the engine's buffer every few milliseconds and hands each
/// sample down the one path (`SampleRouting`), discovers new and exited threads (`ThreadScan`),
/// and does its mode's work at each wake (`CPUDrainSchedule`, `WallScheduler`).
final class SamplerThread: @unchecked Sendable {
    /// How often a scan of the threads is considered (`ThreadScan.mayFindChanges`): threads
    /// created with pthread_create are attached by the hook before they run, so the scan finds
    /// the others and the ones that exited.
    private static let scanIntervalNanoseconds: UInt64 = 100_000_000
    /// How long before the stop was asked the stopping thread's samples may lie in the profiler's
    /// own exit path: at exit, the C runtime reaches the exit handler through the profiler's own
    /// library's destructor and binds the handler's first calls lazily (an xz sample at 1 ms, in 1
    /// of 20 runs: `__cxa_finalize;writeProfileAtExit();_dl_runtime_resolve_xsavec;…`, its walk
    /// ended at that destructor, which has no unwind info). No more than a period, at most 2 ms;
    /// in cpu mode, only samples with a frame in the profiler's own modules (a short session's
    /// last sample is often its only one).
    private static let exitPathNanoseconds: UInt64 = 2_000_000

    /// The session's settings.
    let configuration: ProfilerConfiguration
    private let stopRequested = Atomic<Bool>(false)
    private let ownTID = Atomic<Int32>(0)
    /// Held by the sampler thread while it drains and wakes, and by `snapshot`: the buffer has
    /// one reader at a time, and the counts are read whole.
    private let loopLock = Mutex<Void>(())
    /// Touched only under `loopLock` until the sampler thread has been joined.
    private var routing: SampleRouting
    private var scan: ThreadScan
    private let schedule: any SamplerSchedule
    /// The sampler's own thread.
    private var handle = pthread_t()
    /// Monotonic time the session started, in ns.
    private(set) var startTime: UInt64 = 0
    /// The counters when the counts in `routing.aggregator` began: the session's start, or in
    /// continuous mode the last window's end (touched under `loopLock`).
    private var countsStart: (nanoseconds: UInt64, counters: SessionCounters)
    /// CPU time the sampler thread used, in ns, once it has ended.
    private var finalCPUNanoseconds: UInt64?
    /// Continuous mode: the window length in ns, and what each window's counts go to (on the
    /// sampler thread: it must only hand them over). Nil for a session counted whole.
    private let window: (nanoseconds: UInt64, deliver: @Sendable (CountedSpan) -> Void)?
    /// Continuous mode's window length in ns; nil for a session counted whole.
    var windowNanoseconds: UInt64? { window?.nanoseconds }
    /// Windows cut so far (continuous mode).
    private(set) var windowsCut = 0
    /// The last tick counted: ticks lie on a grid from the loop's start (touched under `loopLock`).
    private var lastTick: UInt64 = 0
    /// The tick of the last look between counting wakes (`SamplerSchedule.lookAtSleeps`).
    private var lastLook: UInt64 = 0
    /// Reused by every wake to take the ended threads' notes (touched under `loopLock`).
    private var endedBuffer = [ss_ended_thread](repeating: ss_ended_thread(), count: 64)

    /// A sampler that hands every sample to `consumers` as well as to its own counts; with
    /// `window`, it cuts its counts every `window.nanoseconds` and hands each window to `window.deliver`.
    init(configuration: ProfilerConfiguration, consumers: [any SampleConsumer],
         window: (nanoseconds: UInt64, deliver: @Sendable (CountedSpan) -> Void)? = nil) {
        self.configuration = configuration
        self.window = window
        countsStart = (0, Self.zeroCounters)
        routing = SampleRouting(consumers: consumers)
        scan = ThreadScan(sampleCPUNanoseconds: configuration.event == nil ? Int64(configuration.periodNanoseconds) : 0)
        schedule = switch configuration.mode {
        case .cpu: CPUDrainSchedule(periodNanoseconds: configuration.periodNanoseconds, bufferSlots: configuration.bufferSlots,
                                    sampledEvent: configuration.event != nil)
        case .wall: WallSessionSchedule.make(periodNanoseconds: configuration.periodNanoseconds, maxDepth: configuration.maxDepth,
                                             bufferSlots: configuration.bufferSlots)
        }
    }

    /// Attaches the existing threads and starts the loop on a new thread; the session starts at
    /// `startTime` (monotonic ns).
    func start(at startTime: UInt64) throws(ProfilerError) {
        self.startTime = startTime
        countsStart = (startTime, counters())
        // Before the loop runs: a request that comes first counts ticks from here, not from zero.
        lastTick = ss_now_ns()
        if configuration.mode == .wall { ss_wall_tick_grid_set(lastTick, configuration.periodNanoseconds) }
        ss_async_stacks_enable(configuration.asyncStacks ? 1 : 0)
        _ = scan.scan(initial: true, own: ownThreads(), at: ss_now_ns(), routing: &routing)
        schedule.watch(scan.attachedThreads())
        ss_sampler_sleep_reset()
        ss_sampler_arriving()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = ss_spawn_unsampled_thread(&handle, { context in
            let sampler = Unmanaged<SamplerThread>.fromOpaque(context!).takeRetainedValue()
            ProfilerThreads.name("ss-sampler")
            sampler.run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<SamplerThread>.fromOpaque(context).release()
            ss_sampler_leaving()
            throw .invalidConfiguration("cannot start the sampler thread: \(String(cString: strerror(status)))")
        }
    }

    /// Stops the loop, disarms the engine and returns everything counted up to `end` (in
    /// continuous mode, since the last window): the moment the calling thread began to stop the
    /// session (from then on it runs the profiler's code).
    func finish(at end: UInt64) -> CountedSpan {
        stopRequested.store(true, ordering: .releasing)
        ss_sampler_wake()
        pthread_join(handle, nil)
        let attached = scan.attachedThreads() // none once the engine has stopped
        ss_engine_stop()
        let exitPath = (tid: ss_current_tid(), from: end &- min(schedule.intervalNanoseconds, Self.exitPathNanoseconds))
        let profilerBases = configuration.mode == .cpu ? ProfilerModules.loadedBases() : []
        drain { sample in
            sample.tid == exitPath.tid && sample.timeNanoseconds >= exitPath.from
                && (configuration.mode == .wall || sample.frames.contains { ProfilerModules.isProfilerCode($0, bases: profilerBases) })
        }
        schedule.stopping(exitPath.tid, from: exitPath.from)
        // The ticks since the last wake (up to a batch of them, 50 ms) are counted as a wake would.
        countTicks(upTo: end, scanning: false, stoppedWith: attached)
        schedule.finishing(routing: &routing)
        let losses = lossCounters().losses(of: routing.aggregator, since: countsStart.counters.losses)
        for consumer in routing.consumers {
            consumer.finish(durationNanoseconds: ss_now_ns() &- startTime, threads: routing.aggregator.threads, losses: losses)
        }
        let now = ss_now_ns()
        let own = ownThreads()
        routing.updateThreads { aggregator in
            for tid in ThreadDirectory.threadIDs() where !own.contains(tid) {
                aggregator.observe(tid, cpu: ss_thread_cpu_time_ns(tid), name: nil, bornDuringSession: true, at: now)
            }
        }
        return countedSoFar(at: end)
    }

    /// What has been counted so far (since the last window in continuous mode), with the buffer
    /// drained first, while sampling goes on.
    func snapshot(at end: UInt64) -> CountedSpan {
        loopLock.withLock { _ in
            drainAndSettle()
            return countedSoFar(at: end)
        }
    }

    /// Begins a span of this session at `now` (a profile request): from here on every sample is
    /// also counted in the span's own counts, until `endSpan`.
    func beginSpan(at now: UInt64) -> SpanCollector {
        loopLock.withLock { _ in
            drainAndSettle()
            let span = SpanCollector(counts: routing.aggregator.continuation(at: now), startNanoseconds: now, startCounters: counters())
            routing.collectors.append(span)
            for consumer in routing.consumers { consumer.spanBegan(span) }
            return span
        }
    }

    /// Ends `span` at `end` and returns what it counted. Call it once per span, before `finish`.
    func endSpan(_ span: SpanCollector, at end: UInt64) -> CountedSpan {
        loopLock.withLock { _ in
            drainAndSettle()
            routing.collectors.removeAll { $0 === span }
            refreshCPUTimes()
            span.counts.adoptThreadFigures(from: routing.aggregator)
            var counted = CountedSpan(counts: span.counts, from: span.startCounters, to: counters(),
                                      startNanoseconds: span.startNanoseconds, endNanoseconds: end)
            for consumer in routing.consumers { counted.calls = consumer.spanEnded(span) ?? counted.calls }
            return counted
        }
    }

    /// The session's counts since they began (the start, or the last window), ended at `end`.
    private func countedSoFar(at end: UInt64) -> CountedSpan {
        CountedSpan(counts: routing.aggregator, from: countsStart.counters, to: counters(),
                    startNanoseconds: max(startTime, countsStart.nanoseconds), endNanoseconds: end)
    }

    /// Continuous mode, on the sampler thread: the window that ends at `now` is handed over, and
    /// the counts go on afresh (live threads only, so memory does not grow with the run).
    private func cutWindow(at now: UInt64, deliver: @Sendable (CountedSpan) -> Void) {
        schedule.settle(routing: &routing)
        refreshCPUTimes()
        let end = counters()
        var window = CountedSpan(counts: routing.aggregator, from: countsStart.counters, to: end,
                                 startNanoseconds: countsStart.nanoseconds, endNanoseconds: now)
        window.calls = routing.cut(at: now)
        countsStart = (now, end)
        windowsCut += 1
        deliver(window)
    }

    /// Reads the CPU time of every thread the session knows alive (a window or span ends with them current).
    private func refreshCPUTimes() {
        routing.updateThreads { aggregator in
            for tid in Array(aggregator.liveThreadIDs) { aggregator.observeCPU(tid, cpu: ss_thread_cpu_time_ns(tid)) }
        }
    }

    /// The engine's and this sampler's counters now.
    private func counters() -> SessionCounters {
        let tid = ownTID.load(ordering: .relaxed)
        let cpu = finalCPUNanoseconds ?? (tid > 0 ? UInt64(max(0, ss_thread_cpu_time_ns(tid))) : 0)
        return SessionCounters(losses: lossCounters(), handlerTiming: HandlerTiming.snapshot(),
                               asyncStacks: Profile.AsyncStacks.engine(), samplerCPU: cpu)
    }

    /// The loss counters now: what the consumers get at every wake, without the histogram.
    private func lossCounters() -> LossCounters {
        LossCounters(dropped: ss_buffer_dropped(), foreignSignals: ss_engine_foreign_signals(),
                     countedEvents: ss_engine_events_counted(), descriptorRefusals: ss_thread_descriptor_refusals(),
                     earlyOverflows: ss_engine_early_overflows(), unwalkedSignals: ss_wall_signals_unwalked(),
                     missedTicks: schedule.missedTicks, skippedTicks: schedule.lostTicks,
                     preemptionsAtCopy: schedule.preemptionCounts.atCopy, preemptionsAtNearestSample: schedule.preemptionCounts.atNearestSample,
                     subsampledTicks: schedule.subsampledTicks, subsampleLooksPerSecond: schedule.subsampleLooksPerSecond,
                     ringsGivenBackForSwitches: schedule.ringsGivenBackForSwitches)
    }

    private static let zeroCounters = SessionCounters(
        losses: LossCounters(dropped: 0, foreignSignals: 0, countedEvents: 0, descriptorRefusals: 0, earlyOverflows: 0, unwalkedSignals: 0, missedTicks: 0,
                             skippedTicks: [:], preemptionsAtCopy: 0, preemptionsAtNearestSample: 0, subsampledTicks: 0, subsampleLooksPerSecond: 0,
                             ringsGivenBackForSwitches: 0),
        handlerTiming: .zero, asyncStacks: Profile.AsyncStacks(), samplerCPU: 0)

    /// The profiler's own threads, never attached.
    private func ownThreads() -> Set<Int32> {
        ProfilerThreads.all.union([ownTID.load(ordering: .relaxed)])
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
        let interval = schedule.intervalNanoseconds
        var lastScan = loopLock.withLock { _ in lastTick }
        var windowEnd = startTime &+ (window?.nanoseconds ?? 0)
        while !stopRequested.load(ordering: .acquiring) {
            // A window is cut at the first tick at or after its end, however many ticks a wake counts.
            let (wakeAt, counting) = loopLock.withLock { _ in
                var counting = lastTick &+ UInt64(schedule.ticksPerWake) &* interval
                if window != nil { counting = min(counting, max(windowEnd, lastTick &+ interval)) }
                let look = max(lastTick, lastLook) &+ UInt64(schedule.ticksPerLook) &* interval
                return (min(counting, look), counting)
            }
            let woken = ss_sampler_sleep_until(wakeAt, schedule.watchesNewThreads && schedule.ticksPerWake > 1 ? 1 : 0)
            if woken == Int32(SS_WOKEN_TO_STOP) { break }
            ss_sampler_park_point()
            if woken == Int32(SS_WOKEN_FOR_THREAD) {
                // A thread started in the middle of a long batch: watched now, not at the batch's end.
                loopLock.withLock { _ in schedule.watch(scan.attachedThreads()) }
                continue
            }
            if woken == Int32(SS_WOKEN_TO_REFRESH) {
                // A module was closed: serve handlers the new list now, then sleep on to the tick.
                ss_module_cache_refresh()
                ss_code_ranges_refresh()
                continue
            }
            let now = ss_now_ns()
            ss_module_cache_refresh()
            ss_code_ranges_refresh()
            if now < counting {
                // Between the wakes that count ticks: a look at the threads at the last tick.
                loopLock.withLock { _ in
                    guard now > lastTick else { return }
                    lastLook = lastTick &+ (now &- lastTick) / interval &* interval
                    schedule.lookAtSleeps(at: lastLook)
                }
                continue
            }
            let scanning = now &- lastScan >= Self.scanIntervalNanoseconds
            loopLock.withLock { _ in
                countTicks(upTo: now, scanning: scanning)
                if let window, now >= windowEnd {
                    cutWindow(at: now, deliver: window.deliver)
                    // The next window ends a whole number of windows after the start; a late wake does not shift them.
                    windowEnd &+= ((now &- windowEnd) / window.nanoseconds + 1) &* window.nanoseconds
                }
            }
            if scanning { lastScan = now }
        }
        finalCPUNanoseconds = UInt64(max(0, ss_thread_cpu_time_ns(ss_current_tid())))
    }

    /// Under `loopLock`: the ticks due since the last one counted (more than the schedule planned
    /// when this thread was kept off a core: `late`), counted now; with none due, the buffer is
    /// drained. A request (span, snapshot) calls it too, so that no tick before it is counted
    /// after it however many ticks a wake counts.
    /// `stoppedWith`: the sampler thread has ended, the stop was asked at `now` and these threads
    /// were attached then; the ticks are counted all the same (none is late).
    private func countTicks(upTo now: UInt64, scanning: Bool, stoppedWith attachedAtStop: ArraySlice<Int32>? = nil) {
        let interval = schedule.intervalNanoseconds
        let due = now > lastTick ? Int((now - lastTick) / interval) : 0
        guard due > 0 else { return drain() }
        // A stop asked for meanwhile: its own last wake counts these ticks, up to the moment it
        // was asked (after it, the thread that asked runs the profiler's code). Counted here they
        // would be taken past that moment; left half counted, lost without a word.
        if attachedAtStop == nil, stopRequested.load(ordering: .acquiring) { return }
        // The ticks lie on the grid, the last at or before `now` (at the stop, `now` is the
        // moment it was asked: a tick placed there would fall in the profiler's own exit path).
        wake(at: lastTick &+ UInt64(due) &* interval, due: due, late: attachedAtStop == nil ? max(0, due - schedule.ticksPerWake) : 0, scanning: scanning,
             stoppedWith: attachedAtStop)
        lastTick &+= UInt64(due) &* interval
    }

    /// One wake of the loop: drain, the ended threads' notes, the mode's work, the scan when due, and
    /// the consumers' turn.
    private func wake(at now: UInt64, due: Int, late: Int, scanning: Bool, stoppedWith attachedAtStop: ArraySlice<Int32>?) {
        drain()
        // The attached threads before the ended ones' notes: a thread that ends between the two
        // reads is then in both, and counted by its note alone. Read the other way round, it was in
        // neither, and the ticks of its life since the last wake were dropped without a word
        // (30 of a late thread's 200 at 1 ms, in a batch of 50 ms: Sleepers' late threads in CI).
        let attached = attachedAtStop ?? scan.attachedThreads()
        // The threads that ended by themselves since the last wake first: their ticks up to their
        // end are counted by this wake, before a scan forgets them.
        let ended = takeEndedThreads()
        // A thread's CPU time as it ended: its last reading, exact. The threads whose end leaves
        // no such note are read at every wake instead (every thread at every wake was 60 % of
        // cpu mode's sampler with 1,000 threads asleep).
        routing.updateThreads { aggregator in
            for note in ended { aggregator.observeCPU(note.tid, cpu: note.cpu_ns) }
            aggregator.observeCPU(getpid(), cpu: ss_thread_cpu_time_ns(getpid()))
            for tid in scan.threadsAttachedByScan { aggregator.observeCPU(tid, cpu: ss_thread_cpu_time_ns(tid)) }
        }
        schedule.threadsEnded(ended)
        let live = ended.isEmpty ? attached : attached.filter { tid in !ended.contains { $0.tid == tid } }[...]
        schedule.wake(at: now, due: due, late: late, threads: live, routing: &routing)
        if scanning, scan.mayFindChanges(at: now) {
            let gone = scan.scan(initial: false, own: ownThreads(), at: now, routing: &routing,
                                 ending: { self.schedule.threadEnding($0, routing: &$1) })
            for tid in gone { schedule.threadEnded(tid) }
            // Threads the scan attached are watched from now, not from the next wake.
            schedule.watch(scan.attachedThreads())
        }
        guard !routing.consumers.isEmpty else { return }
        let losses = lossCounters().losses(of: routing.aggregator, since: countsStart.counters.losses)
        for consumer in routing.consumers { consumer.woke(at: now, threads: routing.aggregator.threads, losses: losses) }
    }

    /// Counts the ticks due and has the schedule count what it kept for later: the counts are whole.
    private func drainAndSettle() {
        countTicks(upTo: ss_now_ns(), scanning: false)
        schedule.settle(routing: &routing)
    }

    /// The threads that ended since the last call, as the engine noted them (`ss_thread_take_ended`).
    private func takeEndedThreads() -> [ss_ended_thread] {
        var notes: [ss_ended_thread] = []
        while true {
            let taken = endedBuffer.withUnsafeMutableBufferPointer { ss_thread_take_ended($0.baseAddress, $0.count) }
            notes += endedBuffer[0..<taken]
            if taken < endedBuffer.count { return notes }
        }
    }

    /// Hands every sample in the buffer down the path, except those `dropped` says are not the
    /// program's (the stopping thread in the profiler's exit code) and those with no frame: a walk
    /// the engine found wholly in the profiler's code (`ss_leave_out_own_code`), such as the exit
    /// handler's first calls bound lazily before the preload library's tables are built, which a
    /// thread that loses its core in the loader's resolver can take outside the exit path's window.
    private func drain(dropping dropped: (Sample) -> Bool = { _ in false }) {
        while let pointer = ss_buffer_peek() {
            let sample = Sample(pointer)
            ss_buffer_advance()
            if sample.frames.isEmpty || dropped(sample) { continue }
            schedule.route(sample, into: &routing)
        }
    }
}
