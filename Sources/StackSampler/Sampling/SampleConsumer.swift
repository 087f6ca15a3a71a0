/// What a session feeds every sample to besides its own counts (`StackAggregator`): the raw
/// stream, invocation tracking, and what comes next (continuous windows). Each gets the same
/// calls in the same order: on the sampler thread while it runs, then on the thread that stops
/// the session; never two at once.
protocol SampleConsumer: AnyObject {
    /// A sample, counted as `stack` (`stack.thread` indexes `threads`, the session's thread records).
    func take(_ sample: Sample, as stack: StackAggregator.StackKey, threads: [ThreadRecord])
    /// `stack` counted `times` more, at ticks `spacing` ns apart, the last at `time`: wall-mode
    /// ticks in which its thread did not move.
    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, times: Int, spacing: UInt64, threads: [ThreadRecord])
    /// The thread with record index `thread` has exited.
    func threadEnded(_ thread: Int)
    /// Wall mode: ticks of the thread with record index `thread` were lost where it may have been
    /// anywhere (`TickLoss.leavesPlaceUnknown`), after the samples it was given and before the
    /// ones to come.
    func ticksLost(_ thread: Int)
    /// After each wake of the sampler thread, with the losses so far.
    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses)
    /// The session has ended: every sample has been handed over.
    func finish(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses)
    /// Continuous mode: a window ended at `now` and the thread records were renumbered (live
    /// threads only, `threads` now): `renumbered` maps each live thread's old index to its new
    /// one. Returns the calls to hand over with the window, if the consumer tracks them.
    func cut(at now: UInt64, renumbered: [Int: Int], threads: [ThreadRecord]) -> WindowCalls?
    /// A profile request's span begins: from here on it is fed every sample too.
    func spanBegan(_ span: SpanCollector)
    /// The request's span ends; returns its calls (thread indexes of `span.counts`), if tracked.
    func spanEnded(_ span: SpanCollector) -> WindowCalls?
}

extension SampleConsumer {
    /// Counts by tick and keeps no order between them: a lost tick changes nothing.
    func ticksLost(_ thread: Int) {}
    /// Tracks no calls: nothing to hand over.
    func cut(at now: UInt64, renumbered: [Int: Int], threads: [ThreadRecord]) -> WindowCalls? { nil }
    func spanBegan(_ span: SpanCollector) {}
    func spanEnded(_ span: SpanCollector) -> WindowCalls? { nil }
}

/// The one path of a sample: counted by the aggregator, then handed to every consumer.
struct SampleRouting {
    /// The session's counts.
    private(set) var aggregator = StackAggregator()
    /// Everything else a sample goes to.
    let consumers: [any SampleConsumer]
    /// Spans of the session being taken (profile requests): each counts every sample too.
    var collectors: [SpanCollector] = []
    /// Threads with ticks lost before their first sample (no record index yet): the consumers
    /// hear of the loss just before that sample.
    private(set) var lostBeforeFirstSample: Set<Int32> = []

    /// Counts `sample`, hands it to every consumer, and counts its thread's stack `owedTicks`
    /// more times (wall ticks that passed while its signal was on its way).
    mutating func take(_ sample: Sample, owedTicks: Int = 0) {
        let stack = aggregator.record(sample)
        if !lostBeforeFirstSample.isEmpty, lostBeforeFirstSample.remove(sample.tid) != nil {
            for consumer in consumers { consumer.ticksLost(stack.thread) }
        }
        for collector in collectors { collector.counts.record(sample) }
        for consumer in consumers { consumer.take(sample, as: stack, threads: aggregator.threads) }
        repeatLast(sample.tid, at: sample.timeNanoseconds, times: owedTicks, spacing: 0)
    }

    /// Counts the last stack of `tid` `times` more (ticks it stood for without a new sample),
    /// at ticks `spacing` ns apart, the last at `now`: one step whatever `times` is, so that a
    /// thread that has not run costs the same for one tick as for many.
    mutating func repeatLast(_ tid: Int32, at now: UInt64, times: Int, spacing: UInt64) {
        guard times > 0, let stack = aggregator.repeatLast(tid, at: now, times: times) else { return }
        for collector in collectors { collector.counts.repeatLast(tid, at: now, times: times) }
        for consumer in consumers { consumer.repeatLast(stack, at: now, times: times, spacing: spacing, threads: aggregator.threads) }
    }

    /// Wall mode: ticks of `tid` were lost, between its samples handed over so far and the next.
    mutating func ticksLost(_ tid: Int32) {
        guard let thread = aggregator.index(of: tid) else {
            lostBeforeFirstSample.insert(tid)
            return
        }
        for consumer in consumers { consumer.ticksLost(thread) }
    }

    /// Forgets the tid of a thread that has exited.
    mutating func threadEnded(_ tid: Int32) {
        lostBeforeFirstSample.remove(tid)
        for collector in collectors { collector.counts.threadEnded(tid) }
        guard let thread = aggregator.threadEnded(tid) else { return }
        for consumer in consumers { consumer.threadEnded(thread) }
    }

    /// Gives the aggregator's thread figures to `update` (names, CPU times, masks); the spans
    /// being taken get them too.
    mutating func updateThreads(_ update: (inout StackAggregator) -> Void) {
        update(&aggregator)
        for collector in collectors { collector.counts.adoptThreadFigures(from: aggregator) }
    }

    /// Continuous mode: the counts start afresh at `now` (the window before is handed over by
    /// the sampler); the consumers learn the new thread indexes and hand over the window's
    /// calls, if they track them.
    mutating func cut(at now: UInt64) -> WindowCalls? {
        let before = aggregator
        aggregator = before.continuation(at: now)
        var renumbered: [Int: Int] = [:]
        for tid in aggregator.liveThreadIDs {
            if let old = before.index(of: tid), let new = aggregator.index(of: tid) { renumbered[old] = new }
        }
        var calls: WindowCalls?
        for consumer in consumers {
            if let handed = consumer.cut(at: now, renumbered: renumbered, threads: aggregator.threads) { calls = handed }
        }
        return calls
    }
}
