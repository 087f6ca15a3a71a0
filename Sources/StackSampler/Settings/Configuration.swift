import CEngine

/// How samples are triggered.
public enum SamplingMode: String, Sendable, CaseIterable {
    /// On-CPU time: each thread is sampled as it consumes CPU (SIGPROF from a per-thread CPU-time timer).
    case cpu
    /// Wall-clock time: every thread is sampled on a fixed schedule, running or blocked (SIGPROF sent by the sampler thread).
    case wall
}

/// Settings of one profiling session.
public struct ProfilerConfiguration: Sendable {
    /// Time between two samples of one thread.
    public var period: Duration
    /// What drives sampling.
    public var mode: SamplingMode
    /// Frames kept per sample; deeper stacks are kept truncated and marked.
    public var maxDepth: Int
    /// Samples the engine's buffer holds between two drains; beyond it samples are dropped and counted.
    public var bufferSlots: Int
    /// Where to stream the session as it runs (a raw recording, see `RawRecording`), so that a
    /// profile can be made even if the process is killed; nil for no stream.
    public var recordingPath: String?
    /// Where names come from and how they are shown, when the profile is built.
    public var symbols = SymbolOptions()
    /// Reconstructs function invocations and reports stalls with these settings; nil (the default) does not.
    public var invocations: InvocationConfiguration?
    /// Whether samples of Swift jobs show their task's async callers in place of the executor
    /// frames (the default), or their machine stacks.
    public var asyncStacks = true

    /// Creates a configuration; the defaults sample every 10 ms of CPU time, 256 frames deep.
    public init(period: Duration = .milliseconds(10), mode: SamplingMode = .cpu, maxDepth: Int = 256, bufferSlots: Int = 1024,
                invocations: InvocationConfiguration? = nil) {
        self.period = period
        self.mode = mode
        self.maxDepth = maxDepth
        self.bufferSlots = bufferSlots
        self.invocations = invocations
    }

    /// The period in whole nanoseconds.
    public var periodNanoseconds: UInt64 { period.wholeNanoseconds }

    /// Checks the values against what the engine accepts.
    func validated() throws(ProfilerError) -> ProfilerConfiguration {
        guard PeriodParser.accepted.contains(periodNanoseconds) else {
            throw .invalidConfiguration("period \(PeriodParser.format(nanoseconds: periodNanoseconds)) is outside \(PeriodParser.acceptedDescription)")
        }
        do {
            try SessionSettings.maxDepth.check(maxDepth, shown: "max depth \(maxDepth)")
            try SessionSettings.bufferSize.check(bufferSlots, shown: "buffer size \(bufferSlots)")
        } catch {
            throw .invalidConfiguration(error.description)
        }
        var checked = self
        checked.invocations = try invocations?.validated()
        return checked
    }
}
