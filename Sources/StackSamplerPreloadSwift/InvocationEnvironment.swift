import Glibc
import StackSampler

/// The preload library's invocation settings, from the environment:
/// `STACKSAMPLER_INVOCATIONS` (file to write; `%p` becomes the pid, `%t` the window in continuous
/// mode; `1` tracks them without a file, for the daemon's windows and endpoints),
/// `STACKSAMPLER_CALLS` (continuous mode: each window's calls table), `STACKSAMPLER_INVOCATION_FORMAT`
/// (chrome, speedscope or spans), the filters `STACKSAMPLER_INVOCATION_MIN_SAMPLES`,
/// `STACKSAMPLER_INVOCATION_MIN_DURATION`, `STACKSAMPLER_INVOCATION_FILTER` (glob or substring),
/// `STACKSAMPLER_INVOCATION_MAX_DEPTH`, the cap `STACKSAMPLER_INVOCATION_CAPACITY`, and
/// `STACKSAMPLER_STALL_THRESHOLD` with `STACKSAMPLER_STALLS` (file for the stall reports).
struct InvocationEnvironment: Sendable {
    /// Tracking settings; nil when neither invocations nor stall reports are asked for.
    var configuration: InvocationConfiguration?
    /// Where to write the invocations, if anywhere, and in which format.
    var outputPath: String?
    /// The format of that file.
    var format: InvocationFormat
    /// Continuous mode: where each window's calls table goes, if anywhere.
    var callsPath: String?

    /// Reads the variables; `pid` replaces `%p` in paths.
    static func read(pid: String) throws(SettingError) -> InvocationEnvironment {
        let asked = try PreloadSettings.read(SessionSettings.invocations)?.replacingPercentP(with: pid)
        let output = asked == "1" ? nil : asked
        let callsPath = try PreloadSettings.read(SessionSettings.calls)?.replacingPercentP(with: pid)
        let format = try PreloadSettings.read(SessionSettings.invocationFormat) ?? SessionSettings.invocationFormat.defaultValue!
        let threshold = try PreloadSettings.read(SessionSettings.stallThreshold)
        let tracked = asked != nil || callsPath != nil
        guard tracked || threshold != nil else { return InvocationEnvironment(configuration: nil, outputPath: nil, format: format) }
        var configuration = InvocationConfiguration(stallThreshold: threshold,
                                                    stallsPath: try PreloadSettings.read(SessionSettings.stalls)?.replacingPercentP(with: pid))
        // Stall reports alone need no records.
        configuration.capacity = !tracked ? 0 : try PreloadSettings.read(SessionSettings.invocationCapacity) ?? configuration.capacity
        configuration.minimumSamples = try PreloadSettings.read(SessionSettings.invocationMinSamples) ?? configuration.minimumSamples
        configuration.minimumDuration = try PreloadSettings.read(SessionSettings.invocationMinDuration) ?? .zero
        configuration.maxDepth = try PreloadSettings.read(SessionSettings.invocationMaxDepth)
        configuration.functionPattern = try PreloadSettings.read(SessionSettings.invocationFilter).map(FunctionPattern.init)
        return InvocationEnvironment(configuration: configuration, outputPath: output, format: format, callsPath: callsPath)
    }
}
