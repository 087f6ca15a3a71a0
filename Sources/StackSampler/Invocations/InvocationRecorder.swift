import CEngine

/// Invocation tracking as the sampler thread runs it: every drained or repeated sample goes to
/// the tracker, over this process's symbols, and stall reports are written as they come.
struct InvocationRecorder {
    private(set) var tracker: InvocationTracker<SymbolLookup>
    private let reporter: StallReporter?

    /// Throws if the stalls file cannot be created.
    init(settings: InvocationConfiguration, period: UInt64, mode: SamplingMode) throws(ProfilerError) {
        tracker = InvocationTracker(settings: settings, period: period, lookup: SymbolLookup())
        reporter = settings.stallThreshold == nil ? nil : try StallReporter(mode: mode, path: settings.stallsPath)
    }

    /// Feeds a sample drained from the engine, of the thread with record index `thread`.
    mutating func record(_ sample: UnsafePointer<ss_sample>, thread: Int) {
        let header = sample.pointee
        let incomplete = UInt32(SS_SAMPLE_TRUNCATED) | UInt32(SS_SAMPLE_LEAF_ONLY) | UInt32(SS_SAMPLE_UNWIND_FAILED)
            | UInt32(SS_SAMPLE_UNWIND_FAULTED)
        let frames = UnsafeBufferPointer(start: ss_sample_frames(sample), count: Int(header.depth))
        tracker.record(thread: thread, leafFirst: frames, isComplete: UInt32(header.flags) & incomplete == 0, at: header.time_ns)
    }

    /// Counts the thread's last stack again (wall mode, the thread has not run).
    mutating func repeatLast(thread: Int, at time: UInt64) {
        tracker.repeatLast(thread: thread, at: time)
    }

    /// Closes the invocations of a thread that has exited.
    mutating func threadEnded(thread: Int) {
        tracker.threadEnded(thread: thread)
    }

    /// Writes the stall reports made since the last call; `threads` are the sampler's thread records.
    mutating func reportStalls(threads: [ThreadRecord]) {
        let stalls = tracker.takeStalls()
        guard let reporter else { return }
        for stall in stalls where threads.indices.contains(stall.thread) {
            reporter.report(stall, thread: threads[stall.thread]) { tracker.name(of: $0) }
        }
    }

    /// Closes every open invocation at the end of the session.
    mutating func finish() {
        tracker.finish()
    }
}
