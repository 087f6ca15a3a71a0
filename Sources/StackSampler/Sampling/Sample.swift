import CEngineHeader

/// One sample as the engine took it (`ss_sample`), decoded once, before any consumer sees it.
struct Sample: Sendable {
    /// The thread that was sampled.
    var tid: Int32
    /// CLOCK_MONOTONIC when it was taken, in ns.
    var timeNanoseconds: UInt64
    /// The interrupted PC, then return addresses: leaf first.
    var frames: [UInt]
    /// Why the walk stopped before the thread's first frame (or a Swift task's async chain), if it did.
    var cut: Profile.StackCut?
    /// Periods it stands for: 1, plus timer expirations the kernel merged into it.
    var periods: Int
    /// Wall mode: the thread's CPU time as the sample was taken; nil in cpu mode.
    var cpuNanoseconds: Int64?
    /// The walk crossed JIT code (code without unwind info that no module accounts for) by frame
    /// pointers, each step checked.
    var throughFramePointers: Bool

    /// Whether the stack reaches the thread's root (nothing cut or missing).
    var isComplete: Bool { cut == nil }

    /// A sample from its parts (a stack walked by the sampler, or one read back from a trace).
    init(tid: Int32, timeNanoseconds: UInt64, frames: [UInt], cut: Profile.StackCut?, periods: Int, cpuNanoseconds: Int64?,
         throughFramePointers: Bool) {
        self.tid = tid
        self.timeNanoseconds = timeNanoseconds
        self.frames = frames
        self.cut = cut
        self.periods = periods
        self.cpuNanoseconds = cpuNanoseconds
        self.throughFramePointers = throughFramePointers
    }

    /// Decodes the engine's sample.
    init(_ sample: UnsafePointer<ss_sample>) {
        let header = sample.pointee
        tid = header.tid
        timeNanoseconds = header.time_ns
        frames = Array(UnsafeBufferPointer(start: ss_sample_frames(sample), count: Int(header.depth)))
        let flags = UInt32(header.flags)
        cut = if flags & UInt32(SS_SAMPLE_TRUNCATED) != 0 { .depth }
            else if flags & UInt32(SS_SAMPLE_LEAF_ONLY) != 0 { .leafOnly }
            else if flags & UInt32(SS_SAMPLE_UNWIND_FAULTED) != 0 { .fault }
            else if flags & UInt32(SS_SAMPLE_UNWIND_FAILED) != 0 { .noUnwindInfo }
            else { nil }
        periods = Int(max(1, header.periods))
        cpuNanoseconds = header.cpu_ns >= 0 ? header.cpu_ns : nil
        throughFramePointers = flags & UInt32(SS_SAMPLE_FRAME_POINTERS) != 0
    }
}
