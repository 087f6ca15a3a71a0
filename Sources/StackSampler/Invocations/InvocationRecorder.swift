import CEngineHeader

/// Invocation tracking as the sampler thread runs it: every drained or repeated sample goes to
/// the tracker, over this process's symbols, and stall reports are written as they come. In a
/// continuous session each window takes the calls that ended in it; a profile request's span
/// gets a copy of those that end while it runs.
final class InvocationRecorder: SampleConsumer, @unchecked Sendable {
    private(set) var tracker: InvocationTracker<SymbolLookup>
    private let reporter: StallReporter?
    /// The kernel id of each of the sampler's thread records, by index (an index keeps its tid;
    /// kept apart from the records, which change with every sample and must not be shared).
    private var tids: [Int32] = []
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
        noteThreads(threads)
        tracker.record(thread: stack.thread, leafFirst: sample.frames, isComplete: sample.isComplete, at: sample.timeNanoseconds)
        copyToSpans()
        countTracking(1, since: start)
    }

    func repeatLast(_ stack: StackAggregator.StackKey, at time: UInt64, times: Int, spacing: UInt64, threads: [ThreadRecord]) {
        let start = ss_now_ns()
        tracker.repeatLast(thread: stack.thread, at: time, times: times)
        countTracking(times, since: start)
    }

    /// Counts `samples` tracked, and the time since `start`.
    private func countTracking(_ samples: Int, since start: UInt64) {
        tracker.counts.trackedSamples += samples
        tracker.counts.trackingNanoseconds &+= ss_now_ns() &- start
    }

    func threadEnded(_ thread: Int) {
        tracker.threadEnded(thread: thread)
        copyToSpans()
    }

    func ticksLost(_ thread: Int) {
        tracker.ticksLost(thread: thread)
        copyToSpans()
    }

    func woke(at now: UInt64, threads: [ThreadRecord], losses: Profile.Losses) {
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
        tids = []
        noteThreads(threads)
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
            call.thread = tid(of: call.thread)
            return call
        }
        var counts = Profile.InvocationCounts()
        counts.kept = closed.count
        counts.cut = closed.count { $0.isCut }
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
            record.thread = tid(of: record.thread)
            return record
        }
        for index in spans.indices { spans[index].calls += new }
    }

    /// Notes the tids of thread records new since the last call.
    private func noteThreads(_ threads: [ThreadRecord]) {
        guard threads.count > tids.count else { return }
        tids += threads[tids.count...].map(\.tid)
    }

    /// The tid of thread record `index`; -1 if unknown.
    private func tid(of index: Int32) -> Int32 {
        tids.indices.contains(Int(index)) ? tids[Int(index)] : -1
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
