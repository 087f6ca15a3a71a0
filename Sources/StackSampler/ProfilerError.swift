/// Why profiling could not start, stop or write; each description says what to do.
public enum ProfilerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start` was called while a session is running.
    case alreadyRunning
    /// `stop` was called with no session running.
    case notRunning
    /// Every candidate signal already has a handler in this program.
    case noFreeSignal(SamplingMode)
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// A text could not be read as a period.
    case invalidPeriod(String)
    /// The output could not be written.
    case outputFailed(path: String, reason: String)

    /// What went wrong and what to do about it, in one line.
    public var description: String {
        switch self {
        case .alreadyRunning: "the profiler is already running; call stop() before starting again"
        case .notRunning: "the profiler is not running; call start() first"
        case .noFreeSignal(let mode): "no free signal for \(mode) mode: the program handles SIGPROF and every candidate real-time signal"
        case .invalidConfiguration(let detail): "invalid configuration: \(detail)"
        case .invalidPeriod(let text): "'\(text)' is not a sampling period; use a number with a unit: 10ms, 500us, 1s (\(SessionSettings.period.range!))"
        case .outputFailed(let path, let reason): "cannot write \(path): \(reason)"
        }
    }
}
