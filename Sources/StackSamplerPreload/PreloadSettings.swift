import Glibc
import StackSampler

/// Configuration of the preload library, read from the environment:
/// `STACKSAMPLER_OUTPUT` (required; `%p` becomes the pid), `STACKSAMPLER_PERIOD`,
/// `STACKSAMPLER_MODE`, `STACKSAMPLER_PER_THREAD`, `STACKSAMPLER_MAX_DEPTH`, `STACKSAMPLER_SUMMARY`,
/// and the invocation variables (`InvocationEnvironment`).
struct PreloadSettings: Sendable {
    /// The variable that names the output, and the one marking the process that owns an output without `%p`.
    static let outputVariable = "STACKSAMPLER_OUTPUT"
    static let ownerVariable = "STACKSAMPLER_OWNER_PID"

    var outputPath: String
    var configuration: ProfilerConfiguration
    var options: ExportOptions
    /// Where the summary goes: nil for nowhere, "-" for stderr, else a file.
    var summaryPath: String?
    /// Invocation output and stall reports (`STACKSAMPLER_INVOCATIONS`, `STACKSAMPLER_STALL_THRESHOLD`, …).
    var invocations: InvocationEnvironment

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
        let perThread = variable("STACKSAMPLER_PER_THREAD").map { ["1", "true", "yes"].contains($0.lowercased()) } ?? false
        let pid = String(getpid())
        let invocations = try InvocationEnvironment.read(pid: pid)
        configuration.invocations = invocations.configuration
        return PreloadSettings(outputPath: output.replacingPercentP(with: pid), configuration: configuration,
                               options: ExportOptions(perThreadRoots: perThread),
                               summaryPath: variable("STACKSAMPLER_SUMMARY")?.replacingPercentP(with: pid),
                               invocations: invocations)
    }

    /// The value of environment variable `name`, if set.
    static func variable(_ name: String) -> String? {
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
