import Glibc
import StackSampler

/// Configuration of the preload library, read from the environment:
/// `STACKSAMPLER_OUTPUT` (required; comma-separated files, `%p` becomes the pid),
/// `STACKSAMPLER_FORMAT` (else each file's extension), `STACKSAMPLER_PERIOD`, `STACKSAMPLER_MODE`,
/// `STACKSAMPLER_PER_THREAD`, `STACKSAMPLER_ICICLE`, `STACKSAMPLER_MAX_DEPTH`, `STACKSAMPLER_SUMMARY`.
struct PreloadSettings: Sendable {
    /// The variable that names the output, and the one marking the process that owns an output without `%p`.
    static let outputVariable = "STACKSAMPLER_OUTPUT"
    static let ownerVariable = "STACKSAMPLER_OWNER_PID"

    var outputs: [OutputTarget]
    var configuration: ProfilerConfiguration
    var options: ExportOptions
    /// Where the summary goes: nil for nowhere, "-" for stderr, else a file.
    var summaryPath: String?

    /// A setting that cannot be used, with the message that explains it.
    struct Problem: Error {
        var message: String
    }

    /// Reads the settings; nil when `STACKSAMPLER_OUTPUT` is unset (the library stays idle).
    static func fromEnvironment() throws(Problem) -> PreloadSettings? {
        guard let output = variable(outputVariable), !output.isEmpty else { return nil }
        var configuration = ProfilerConfiguration()
        if let text = variable("STACKSAMPLER_PERIOD") {
            do { configuration.period = try PeriodParser.parse(text) } catch {
                throw Problem(message: "STACKSAMPLER_PERIOD=\(text) is not a sampling period; use a number with a unit such as 10ms, 500us or 1s")
            }
        }
        if let text = variable("STACKSAMPLER_MODE") {
            guard let mode = SamplingMode(rawValue: text) else {
                throw Problem(message: "STACKSAMPLER_MODE=\(text) is not a sampling mode; use cpu or wall")
            }
            configuration.mode = mode
        }
        if let text = variable("STACKSAMPLER_MAX_DEPTH") {
            guard let depth = Int(text), (1...4096).contains(depth) else {
                throw Problem(message: "STACKSAMPLER_MAX_DEPTH=\(text) is not a depth; use a whole number from 1 to 4096")
            }
            configuration.maxDepth = depth
        }
        var format: OutputFormat?
        if let text = variable("STACKSAMPLER_FORMAT") {
            guard let named = OutputFormat(rawValue: text) else {
                throw Problem(message: "STACKSAMPLER_FORMAT=\(text) is not a format; use one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            format = named
        }
        let perThread = isSet("STACKSAMPLER_PER_THREAD")
        let pid = String(getpid())
        let outputs = output.split(separator: ",").map { OutputTarget(path: String($0).replacingPercentP(with: pid), format: format) }
        guard !outputs.isEmpty else { throw Problem(message: "\(outputVariable)=\(output) names no file; give one or more paths separated by commas") }
        return PreloadSettings(outputs: outputs, configuration: configuration,
                               options: ExportOptions(perThreadRoots: perThread, icicle: isSet("STACKSAMPLER_ICICLE")),
                               summaryPath: variable("STACKSAMPLER_SUMMARY")?.replacingPercentP(with: pid))
    }

    /// Whether a yes/no variable says yes (`1`, `true`, `yes`).
    private static func isSet(_ name: String) -> Bool {
        variable(name).map { ["1", "true", "yes"].contains($0.lowercased()) } ?? false
    }

    private static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

extension String {
    /// The string with every `%p` replaced by `pid`.
    func replacingPercentP(with pid: String) -> String {
        var result = ""
        var iterator = makeIterator()
        while let character = iterator.next() {
            if character == "%" {
                guard let next = iterator.next() else { result.append(character); break }
                if next == "p" { result += pid } else { result.append(character); result.append(next) }
            } else {
                result.append(character)
            }
        }
        return result
    }
}
