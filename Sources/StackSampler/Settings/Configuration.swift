import CEngineHeader

/// How samples are triggered.
public enum SamplingMode: String, Sendable, CaseIterable {
    /// On-CPU time: each thread is sampled as it consumes CPU (SIGPROF from a per-thread CPU-time timer).
    case cpu
    /// Wall-clock time: every thread is sampled on a fixed schedule, running or blocked (SIGPROF sent by the sampler thread).
    case wall
}

/// What produces cpu-mode samples.
public enum SamplingEngine: String, Sendable, CaseIterable {
    /// perf_event task-clock counters when the kernel allows them (any period), else timers.
    case auto
    /// perf_event task-clock counters (`perf_event_open`), or an error saying why not.
    case perf
    /// Per-thread CPU-time timers, which fire at scheduler ticks only.
    case timer
}

/// An event to sample instead of CPU time (cpu mode, perf engine): a sample every `eventPeriod`
/// of them, in the thread that caused it.
public enum SamplingEvent: String, Sendable, CaseIterable {
    case pageFaults = "page-faults"
    case contextSwitches = "context-switches"
    case cpuMigrations = "cpu-migrations"
    case cycles
    case instructions
    case cacheMisses = "cache-misses"
    case branchMisses = "branch-misses"

    /// The perf_event type and config (linux/perf_event.h: PERF_TYPE_SOFTWARE 1, PERF_TYPE_HARDWARE 0).
    var perfEvent: (type: UInt32, config: UInt64) {
        switch self {
        case .pageFaults: (1, 2)
        case .contextSwitches: (1, 3)
        case .cpuMigrations: (1, 4)
        case .cycles: (0, 0)
        case .instructions: (0, 1)
        case .cacheMisses: (0, 3)
        case .branchMisses: (0, 5)
        }
    }
}

/// Settings of one profiling session.
public struct ProfilerConfiguration: Sendable {
    /// Time between two samples of one thread.
    public var period: Duration
    /// What drives sampling.
    public var mode: SamplingMode
    /// cpu mode: what produces the samples (wall mode: always the sampler thread's signals).
    public var engine = SessionSettings.engine.defaultValue!
    /// cpu mode: sample an event instead of CPU time (perf engine), every `eventPeriod` of them.
    public var event: SamplingEvent?
    /// With `event`: a sample every this many events.
    public var eventPeriod = SessionSettings.eventPeriod.defaultValue!
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
    public var asyncStacks = SessionSettings.asyncStacks.defaultValue!

    /// Creates a configuration; the defaults (`SessionSettings`) sample every 10 ms of CPU time, 256 frames deep.
    public init(period: Duration = SessionSettings.period.defaultValue!, mode: SamplingMode = SessionSettings.mode.defaultValue!,
                maxDepth: Int = SessionSettings.maxDepth.defaultValue!, bufferSlots: Int = SessionSettings.bufferSize.defaultValue!,
                invocations: InvocationConfiguration? = nil) {
        self.period = period
        self.mode = mode
        self.maxDepth = maxDepth
        self.bufferSlots = bufferSlots
        self.invocations = invocations
    }

    /// The period in whole nanoseconds.
    public var periodNanoseconds: UInt64 { period.wholeNanoseconds }

    /// What one sample stands for: `period` of CPU or wall time in ns, or `eventPeriod` events.
    public var sampleWeight: UInt64 { event == nil ? periodNanoseconds : UInt64(eventPeriod) }
    /// What is sampled, as pprof names a sample type: `cpu`, `wall`, or the event's name.
    public var sampleType: String { event?.rawValue ?? mode.rawValue }
    /// The unit of `sampleWeight`: `nanoseconds` or `count`.
    public var sampleUnit: String { event == nil ? "nanoseconds" : "count" }
    /// `cpu mode, period 10ms` or `cpu mode, page-faults every 1`, for titles and summaries.
    public var samplingDescription: String {
        let rate = event.map { "\($0.rawValue) every \(eventPeriod)" } ?? "period \(PeriodParser.format(nanoseconds: periodNanoseconds))"
        return "\(mode.rawValue) mode, \(rate)"
    }

    /// Checks the values against what the engine accepts.
    func validated() throws(ProfilerError) -> ProfilerConfiguration {
        if event != nil, mode != .cpu { throw .invalidConfiguration("an event (\(event!.rawValue)) is sampled in cpu mode only") }
        do {
            try SessionSettings.period.check(period, shown: "period \(PeriodParser.format(period))")
            try SessionSettings.eventPeriod.check(eventPeriod, shown: "event period \(eventPeriod)")
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
