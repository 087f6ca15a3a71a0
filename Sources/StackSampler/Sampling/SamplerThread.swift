import CEngine
import Glibc
import Synchronization

/// The profiler's own thread: drains the engine's buffer every few milliseconds and hands each
/// sample down the one path (`SampleRouting`), discovers new and exited threads (`ThreadScan`),
/// and does its mode's work at each wake (`CPUDrainSchedule`, `WallScheduler`).
final class SamplerThread: @unchecked Sendable {
    /// How often /proc/self/task is read: threads created with pthread_create are attached by
    /// the hook before they run, so the scan finds the others and the ones that exited.
    private static let scanIntervalNanoseconds: UInt64 = 100_000_000

    /// The session's settings.
    let configuration: ProfilerConfiguration
    private let stopRequested = Atomic<Bool>(false)
    private let ownTID = Atomic<Int32>(0)
    /// A thread of the profiler's own besides this one (the one that ends a `capture`), never attached.
    private let helperTID = Atomic<Int32>(0)
    /// Held by the sampler thread while it drains and wakes, and by `snapshot`: the buffer has
    /// one reader at a time, and the counts are read whole.
    private let loopLock = Mutex<Void>(())
    /// Touched only under `loopLock` until the sampler thread has been joined.
    private var routing: SampleRouting
    private var scan: ThreadScan
    private var schedule: any SamplerSchedule
    /// The sampler's own thread.
    private var handle = pthread_t()
    /// Monotonic time the session started, in ns.
    private(set) var startTime: UInt64 = 0
    /// Engine counters when the session started (they run for the life of the process).
    private(set) var handlerTimingAtStart = HandlerTiming.snapshot()
    private(set) var droppedAtStart: UInt64 = 0
    private(set) var foreignSignalsAtStart: UInt64 = 0
    private(set) var countedEventsAtStart: UInt64 = 0
    private(set) var descriptorRefusalsAtStart: UInt64 = 0
    private(set) var asyncStacksAtStart = Profile.AsyncStacks()
    /// CPU time the sampler thread used, in ns.
    private(set) var ownCPUNanoseconds: UInt64 = 0

    /// A sampler that hands every sample to `consumers` as well as to its own counts.
    init(configuration: ProfilerConfiguration, consumers: [any SampleConsumer]) {
        self.configuration = configuration
        routing = SampleRouting(consumers: consumers)
        scan = ThreadScan(mode: configuration.mode)
        schedule = switch configuration.mode {
        case .cpu: CPUDrainSchedule(periodNanoseconds: configuration.periodNanoseconds, bufferSlots: configuration.bufferSlots,
                                    sampledEvent: configuration.event != nil)
        case .wall: WallScheduler(periodNanoseconds: configuration.periodNanoseconds, maxDepth: configuration.maxDepth)
        }
    }

    /// Attaches the existing threads and starts the loop on a new thread; the session starts at
    /// `startTime` (monotonic ns).
    func start(at startTime: UInt64) throws(ProfilerError) {
        self.startTime = startTime
        handlerTimingAtStart = HandlerTiming.snapshot()
        droppedAtStart = ss_buffer_dropped()
        foreignSignalsAtStart = ss_engine_foreign_signals()
        countedEventsAtStart = ss_engine_events_counted()
        descriptorRefusalsAtStart = ss_thread_descriptor_refusals()
        asyncStacksAtStart = Profile.AsyncStacks.engine()
        ss_async_stacks_enable(configuration.asyncStacks ? 1 : 0)
        _ = scan.scan(initial: true, own: ownThreads(), at: ss_now_ns(), routing: &routing)
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
        let losses = losses(routing.aggregator)
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
        return routing.aggregator
    }

    /// What has been counted so far, with the buffer drained first, while sampling goes on.
    func snapshot() -> (counted: StackAggregator, losses: Profile.Losses) {
        loopLock.withLock { _ in
            drain()
            return (routing.aggregator, losses(routing.aggregator))
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
                       unwindFaults: counted.unwindFaults, missedTicks: schedule.missedTicks, skippedTicks: schedule.skippedTicks,
                       overrunPeriods: counted.overrunPeriods,
                       foreignSignals: Int(ss_engine_foreign_signals() - foreignSignalsAtStart),
                       countedEvents: Int(ss_engine_events_counted() - countedEventsAtStart),
                       descriptorRefusals: Int(ss_thread_descriptor_refusals() - descriptorRefusalsAtStart))
    }

    /// The profiler's own threads, never attached.
    private func ownThreads() -> [Int32] {
        var others = [Int32](repeating: 0, count: 32)
        let count = ss_profiler_threads(&others, others.count)
        return [ownTID.load(ordering: .relaxed), helperTID.load(ordering: .relaxed)] + others.prefix(count)
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
            loopLock.withLock { _ in wake(at: now, due: due, scanning: now &- lastScan >= Self.scanIntervalNanoseconds) }
            if now &- lastScan >= Self.scanIntervalNanoseconds { lastScan = now }
            nextWake += UInt64(due) * interval
        }
        ownCPUNanoseconds = UInt64(max(0, ss_thread_cpu_time_ns(ss_current_tid())))
    }

    /// One wake of the loop: drain, scan when due, the mode's work, and the consumers' turn.
    private func wake(at now: UInt64, due: Int, scanning: Bool) {
        drain()
        if scanning {
            for tid in scan.scan(initial: false, own: ownThreads(), at: now, routing: &routing) { schedule.threadEnded(tid) }
        }
        schedule.wake(at: now, due: due, threads: scan.attachedThreads(), routing: &routing,
                      stopRequested: { self.stopRequested.load(ordering: .acquiring) })
        let losses = losses(routing.aggregator)
        for consumer in routing.consumers { consumer.woke(at: now, threads: routing.aggregator.threads, losses: losses) }
    }

    private func drain() {
        while let pointer = ss_buffer_peek() {
            let sample = Sample(pointer)
            ss_buffer_advance()
            routing.take(sample, owedTicks: schedule.arrived(sample))
        }
    }
}
