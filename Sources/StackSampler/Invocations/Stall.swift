/// An invocation that has run past the stall threshold, as reported while it runs: the whole
/// stack at that sample, root first, with how long each of its invocations has run.
struct Stall: Sendable, Hashable {
    /// One frame of the stack.
    struct Frame: Sendable, Hashable {
        /// The frame's current address.
        var address: UInt
        /// How long its invocation has run, in ns (see `InvocationTracker.duration`).
        var runningNanoseconds: UInt64
    }

    /// Index of the thread among the sampler's thread records.
    var thread: Int
    /// The stack, root first.
    var frames: [Frame]
    /// Index in `frames` of the invocation reported: the outermost that crossed the threshold
    /// and is not part of an earlier report.
    var depth: Int
    /// The threshold, in ns.
    var threshold: UInt64

    /// The deepest frame that has run past the threshold: the most specific code that has held
    /// the thread all along, which names the stall.
    var culprit: Frame {
        frames.last { $0.runningNanoseconds > threshold } ?? frames[depth]
    }
}
