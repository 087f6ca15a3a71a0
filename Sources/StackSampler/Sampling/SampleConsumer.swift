/// What a session feeds every sample to besides its own counts (`StackAggregator`): the raw
/// stream, invocation tracking, and what comes next (continuous windows). Each gets the same
/// calls in the same order: on the sampler thread while it runs, then on the thread that stops
/// the session; never two at once.
protocol SampleConsumer: AnyObject {
    /// A sample, counted as `stack` (`stack.thread` indexes `threads`, the session's thread records).
    func take(_ sample: Sample, as stack: StackAggregator.StackKey, threads: [ThreadRecord])
    /// `stack` counted once more at `time`: a wall-mode tick in which its thread did not move.
    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, threads: [ThreadRecord])
    /// The thread with record index `thread` has exited.
    func threadEnded(_ thread: Int)
    /// After each wake of the sampler thread, with the losses so far.
    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses)
    /// The session has ended: every sample has been handed over.
    func finish(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses)
}

/// The one path of a sample: counted by the aggregator, then handed to every consumer.
struct SampleRouting {
    /// The session's counts.
    private(set) var aggregator = StackAggregator()
    /// Everything else a sample goes to.
    let consumers: [any SampleConsumer]
    /// Spans of the session being taken (profile requests): each counts every sample too.
    var collectors: [SpanCollector] = []

    /// Counts `sample`, hands it to every consumer, and counts its thread's stack `owedTicks`
    /// more times (wall ticks that passed while its signal was on its way).
    mutating func take(_ sample: Sample, owedTicks: Int = 0) {
        let stack = aggregator.record(sample)
        for collector in collectors { collector.counts.record(sample) }
        for consumer in consumers { consumer.take(sample, as: stack, threads: aggregator.threads) }
        repeatLast(sample.tid, at: sample.timeNanoseconds, times: owedTicks)
    }

    /// Counts the last stack of `tid` `times` more (ticks it stood for without a new sample).
    mutating func repeatLast(_ tid: Int32, at now: UInt64, times: Int) {
        for _ in 0..<times {
            guard let stack = aggregator.repeatLast(tid, at: now) else { return }
            for collector in collectors { collector.counts.repeatLast(tid, at: now) }
            for consumer in consumers { consumer.repeatLast(stack, at: now, threads: aggregator.threads) }
        }
    }

    /// Forgets the tid of a thread that has exited.
    mutating func threadEnded(_ tid: Int32) {
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
    /// the sampler). Consumers keep thread indexes, so a session with consumers is never cut.
    mutating func cut(at now: UInt64) {
        precondition(consumers.isEmpty, "a session with consumers (raw stream, invocations) is counted whole")
        aggregator = aggregator.continuation(at: now)
    }
}
