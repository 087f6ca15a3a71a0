import CEngine

/// Invocation tracking as the sampler thread runs it: every drained or repeated sample goes to
/// the tracker, over this process's symbols, and stall reports are written as they come. In a
/// continuous session each window takes the calls that ended in it; a profile request's span
/// gets a copy of those that end while it runs.
final class InvocationRecorder: SampleConsumer, @unchecked Sendable {
    private(set) var tracker: InvocationTracker<SymbolLookup>
    private let reporter: StallReporter?
    /// The sampler's thread records as last handed over (a record's thread index names its tid).
    private var threads: [ThreadRecord] = []
    /// Request spans being taken, with the calls ended since each began (thread: the tid).
    private var spans: [(span: ObjectIdentifier, calls: [ClosedInvocation])] = []
    /// The tracker's records already copied to the spans.
    private var copied = 0

    /// Names through the session's `symbols`. Throws if the stalls file cannot be created.
    init(settings: InvocationConfiguration, period: UInt64, mode: SamplingMode, symbols: SessionSymbols) throws(ProfilerError) {
        tracker = InvocationTracker(settings: settings, period: period, lookup: SymbolLookup(symbols: symbols))
        reporter = settings.stallThreshold == nil ? nil : try StallReporter(mode: mode, path: settings.stallsPath)
    }

    func take(_ sample: Sample, as stack: StackAggregator.StackKey, threads: [ThreadRecord]) {
        let start = ss_now_ns()
        self.threads = threads
        tracker.record(thread: stack.thread, leafFirst: sample.frames, isComplete: sample.isComplete, at: sample.timeNanoseconds)
        copyToSpans()
        countTracking(since: start)
    }

    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, threads: [ThreadRecord]) {
        let start = ss_now_ns()
        tracker.repeatLast(thread: stack.thread, at: time)
        countTracking(since: start)
    }

    /// Counts one sample tracked, and the time since `start`.
    private func countTracking(since start: UInt64) {
        tracker.counts.trackedSamples += 1
        tracker.counts.trackingNanoseconds &+= ss_now_ns() &- start
    }

    func threadEnded(_ thread: Int) {
        tracker.threadEnded(thread: thread)
        copyToSpans()
    }

    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        self.threads = threads
        reportStalls(threads: threads)
    }

    /// Reports the last stalls and closes every open invocation.
    func finish(durationNanoseconds: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
        reportStalls(threads: threads)
        tracker.finish()
        copyToSpans()
    }

    /// The calls of the window that ended: the tracker's records and counts start afresh.
    func cut(at now: UInt64, renumbered: [Int: Int], threads: [ThreadRecord]) -> WindowCalls? {
        let calls = takeCalls()
        tracker.renumber(renumbered)
        self.threads = threads
        return calls
    }

    /// Every call closed since the last window (or the start), and those still running.
    func takeCalls() -> WindowCalls {
        copyToSpans()
        copied = 0
        return tracker.takeWindow()
    }

    func spanBegan(_ span: SpanCollector) {
        copyToSpans()
        spans.append((ObjectIdentifier(span), []))
    }

    func spanEnded(_ span: SpanCollector) -> WindowCalls? {
        copyToSpans()
        guard let index = spans.firstIndex(where: { $0.span == ObjectIdentifier(span) }) else { return nil }
        let closed = spans.remove(at: index).calls
        var indexByTID: [Int32: Int32] = [:]
        for (index, record) in span.counts.threads.enumerated() { indexByTID[record.tid] = Int32(index) }
        func inSpan(_ calls: [ClosedInvocation]) -> [ClosedInvocation] {
            calls.compactMap { call in
                indexByTID[call.thread].map { thread in
                    var call = call
                    call.thread = thread
                    return call
                }
            }
        }
        let running = tracker.running().map { call in
            var call = call
            call.thread = threads.indices.contains(Int(call.thread)) ? threads[Int(call.thread)].tid : -1
            return call
        }
        var counts = Profile.InvocationCounts()
        counts.kept = closed.count
        return WindowCalls(closed: inSpan(closed), running: inSpan(running), counts: counts)
    }

    /// Copies the records closed since the last copy to every span being taken, naming their thread by tid.
    private func copyToSpans() {
        let records = tracker.records
        guard copied < records.count else { return }
        defer { copied = records.count }
        guard !spans.isEmpty else { return }
        let new = records[copied...].map { record in
            var record = record
            record.thread = threads.indices.contains(Int(record.thread)) ? threads[Int(record.thread)].tid : -1
            return record
        }
        for index in spans.indices { spans[index].calls += new }
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
