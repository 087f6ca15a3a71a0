import Glibc
import StackSampler

/// Configuration of the preload library, read from the environment:
/// `STACKSAMPLER_OUTPUT` (required; comma-separated files, `%p` becomes the pid),
/// `STACKSAMPLER_FORMAT` (else each file's extension), `STACKSAMPLER_PERIOD`, `STACKSAMPLER_MODE`,
/// `STACKSAMPLER_PER_THREAD`, `STACKSAMPLER_PROCESS_ROOT`, `STACKSAMPLER_ICICLE`, `STACKSAMPLER_MAX_DEPTH`,
/// `STACKSAMPLER_BUFFER_SIZE`, `STACKSAMPLER_SUMMARY` and `STACKSAMPLER_RAW` (`%p` too),
/// `STACKSAMPLER_DEBUG_ROOT`, `STACKSAMPLER_SPECIALIZATIONS`, `STACKSAMPLER_LINES`, `STACKSAMPLER_ASYNC_STACKS` (0: off),
/// and the invocation variables (`InvocationEnvironment`).
struct PreloadSettings: Sendable {
    /// The variable that names the outputs.
    static let outputVariable = "STACKSAMPLER_OUTPUT"

    /// The outputs as given, `%p` not yet replaced.
    var outputPatterns: [OutputTarget]
    /// The summary's destination as given (`-` for stderr), `%p` not yet replaced.
    var summaryPattern: String?
    /// The session's settings.
    var configuration: ProfilerConfiguration
    /// How the outputs are drawn (per-thread and process roots, icicle).
    var options: ExportOptions

    /// The outputs of this process.
    var outputs: [OutputTarget] {
        outputPatterns.map { OutputTarget(path: $0.path.replacingPercentP(with: String(getpid())), format: $0.format) }
    }
    /// Where the summary goes: nil for nowhere, "-" for stderr, else a file (for this process).
    var summaryPath: String? { summaryPattern?.replacingPercentP(with: String(getpid())) }
    /// Whether every process writes a file of its own (the path has `%p`).
    var isPerProcess: Bool { outputPatterns.contains { $0.path.hasPercentP } }
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
        configuration.recordingPath = variable("STACKSAMPLER_RAW")?.replacingPercentP(with: String(getpid()))
        if let text = variable("STACKSAMPLER_BUFFER_SIZE") {
            guard let slots = Int(text), (16...1_048_576).contains(slots) else {
                throw Problem(message: "STACKSAMPLER_BUFFER_SIZE=\(text) is not a buffer size; use a number of samples from 16 to 1048576")
            }
            configuration.bufferSlots = slots
        }
        if let text = variable("STACKSAMPLER_MAX_DEPTH") {
            guard let depth = Int(text), (1...4096).contains(depth) else {
                throw Problem(message: "STACKSAMPLER_MAX_DEPTH=\(text) is not a depth; use a whole number from 1 to 4096")
            }
            configuration.maxDepth = depth
        }
        if let root = variable("STACKSAMPLER_DEBUG_ROOT"), !root.isEmpty {
            configuration.symbols.debugRoot = root
        }
        configuration.symbols.keepsSpecializations = flag("STACKSAMPLER_SPECIALIZATIONS")
        configuration.symbols.resolvesLines = flag("STACKSAMPLER_LINES")
        configuration.asyncStacks = variable("STACKSAMPLER_ASYNC_STACKS") != "0"
        let invocations = try InvocationEnvironment.read(pid: String(getpid()))
        configuration.invocations = invocations.configuration
        var format: OutputFormat?
        if let text = variable("STACKSAMPLER_FORMAT") {
            guard let named = OutputFormat(rawValue: text) else {
                throw Problem(message: "STACKSAMPLER_FORMAT=\(text) is not a format; use one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            format = named
        }
        let outputs = output.split(separator: ",").map { OutputTarget(path: String($0), format: format) }
        guard !outputs.isEmpty else { throw Problem(message: "\(outputVariable)=\(output) names no file; give one or more paths separated by commas") }
        let options = ExportOptions(perThreadRoots: flag("STACKSAMPLER_PER_THREAD"), processRoot: flag("STACKSAMPLER_PROCESS_ROOT"),
                                    icicle: flag("STACKSAMPLER_ICICLE"))
        return PreloadSettings(outputPatterns: outputs, summaryPattern: variable("STACKSAMPLER_SUMMARY"),
                               configuration: configuration, options: options, invocations: invocations)
    }

    private static func flag(_ name: String) -> Bool {
        variable(name).map { ["1", "true", "yes"].contains($0.lowercased()) } ?? false
    }

    /// The value of environment variable `name`, if set.
    static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

extension String {
    /// Whether the string has a `%p` for the pid.
    var hasPercentP: Bool {
        split(separator: "%", omittingEmptySubsequences: false).dropFirst().contains { $0.hasPrefix("p") }
    }

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
