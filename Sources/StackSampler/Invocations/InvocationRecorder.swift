/// Invocation tracking as the sampler thread runs it: every drained or repeated sample goes to
/// the tracker, over this process's symbols, and stall reports are written as they come.
final class InvocationRecorder: SampleConsumer, @unchecked Sendable {
    private(set) var tracker: InvocationTracker<SymbolLookup>
    private let reporter: StallReporter?

    /// Names through the session's `symbols`. Throws if the stalls file cannot be created.
    init(settings: InvocationConfiguration, period: UInt64, mode: SamplingMode, symbols: SessionSymbols) throws(ProfilerError) {
        tracker = InvocationTracker(settings: settings, period: period, lookup: SymbolLookup(symbols: symbols))
        reporter = settings.stallThreshold == nil ? nil : try StallReporter(mode: mode, path: settings.stallsPath)
    }

    func take(_ sample: Sample, as stack: StackAggregator.StackKey, threads: [ThreadRecord]) {
        tracker.record(thread: stack.thread, leafFirst: sample.frames, isComplete: sample.isComplete, at: sample.timeNanoseconds)
    }

    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, threads: [ThreadRecord]) {
        tracker.repeatLast(thread: stack.thread, at: time)
    }

    func threadEnded(_ thread: Int) {
        tracker.threadEnded(thread: thread)
    }

    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        reportStalls(threads: threads)
    }

    /// Reports the last stalls and closes every open invocation.
    func finish(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        reportStalls(threads: threads)
        tracker.finish()
    }

    /// Writes the stall reports made since the last call; `threads` are the sampler's thread records.
    private func reportStalls(threads: [ThreadRecord]) {
        let stalls = tracker.takeStalls()
        guard let reporter else { return }
        for stall in stalls where threads.indices.contains(stall.thread) {
            reporter.report(stall, thread: threads[stall.thread]) { tracker.name(of: $0) }
        }
    }
}
