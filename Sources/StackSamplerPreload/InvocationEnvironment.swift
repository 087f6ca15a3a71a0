import Glibc
import StackSampler

/// The preload library's invocation settings, from the environment:
/// `STACKSAMPLER_INVOCATIONS` (file to write; `%p` becomes the pid), `STACKSAMPLER_INVOCATION_FORMAT`
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

    /// Reads the variables; `pid` replaces `%p` in paths.
    static func read(pid: String) throws(PreloadSettings.Problem) -> InvocationEnvironment {
        let output = PreloadSettings.variable("STACKSAMPLER_INVOCATIONS").flatMap { $0.isEmpty ? nil : $0.replacingPercentP(with: pid) }
        var format = InvocationFormat.chrome
        if let text = PreloadSettings.variable("STACKSAMPLER_INVOCATION_FORMAT") {
            guard let chosen = InvocationFormat(rawValue: text) else {
                throw .init(message: "STACKSAMPLER_INVOCATION_FORMAT=\(text) is not an invocation format; use chrome, speedscope or spans")
            }
            format = chosen
        }
        let threshold = try duration("STACKSAMPLER_STALL_THRESHOLD")
        guard output != nil || threshold != nil else { return InvocationEnvironment(configuration: nil, outputPath: nil, format: format) }
        var configuration = InvocationConfiguration(stallThreshold: threshold,
                                                    stallsPath: PreloadSettings.variable("STACKSAMPLER_STALLS")?.replacingPercentP(with: pid))
        // Stall reports alone need no records.
        configuration.capacity = output == nil ? 0 : try integer("STACKSAMPLER_INVOCATION_CAPACITY", minimum: 0) ?? configuration.capacity
        configuration.minimumSamples = try integer("STACKSAMPLER_INVOCATION_MIN_SAMPLES", minimum: 1) ?? configuration.minimumSamples
        configuration.minimumDuration = try duration("STACKSAMPLER_INVOCATION_MIN_DURATION") ?? .zero
        configuration.maxDepth = try integer("STACKSAMPLER_INVOCATION_MAX_DEPTH", minimum: 1)
        configuration.functionPattern = PreloadSettings.variable("STACKSAMPLER_INVOCATION_FILTER").map(FunctionPattern.init)
        return InvocationEnvironment(configuration: configuration, outputPath: output, format: format)
    }

    private static func integer(_ name: String, minimum: Int) throws(PreloadSettings.Problem) -> Int? {
        guard let text = PreloadSettings.variable(name) else { return nil }
        guard let value = Int(text), value >= minimum else {
            throw .init(message: "\(name)=\(text) is not a whole number of at least \(minimum)")
        }
        return value
    }

    private static func duration(_ name: String) throws(PreloadSettings.Problem) -> Duration? {
        guard let text = PreloadSettings.variable(name) else { return nil }
        do { return try PeriodParser.parse(text) } catch {
            throw .init(message: "\(name)=\(text) is not a duration; use a number with a unit such as 250ms or 1s")
        }
    }
}
