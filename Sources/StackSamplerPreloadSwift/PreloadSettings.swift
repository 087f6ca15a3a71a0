import Glibc
import StackSampler
import StackSamplerDaemon

/// Configuration of the preload library, read from the environment:
/// `STACKSAMPLER_OUTPUT` (comma-separated files, `%p` becomes the pid; required unless a daemon
/// setting is given: `STACKSAMPLER_CONTINUOUS`, `STACKSAMPLER_LISTEN`, `STACKSAMPLER_PUSH`),
/// `STACKSAMPLER_FORMAT` (else each file's extension), `STACKSAMPLER_PERIOD`, `STACKSAMPLER_MODE`,
/// `STACKSAMPLER_PER_THREAD`, `STACKSAMPLER_PROCESS_ROOT`, `STACKSAMPLER_ICICLE`, `STACKSAMPLER_MAX_DEPTH`,
/// `STACKSAMPLER_BUFFER_SIZE`, `STACKSAMPLER_SUMMARY` and `STACKSAMPLER_RAW` (`%p` too),
/// `STACKSAMPLER_DEBUG_ROOT`, `STACKSAMPLER_SPECIALIZATIONS`, `STACKSAMPLER_LINES`, `STACKSAMPLER_ASYNC_STACKS` (0: off),
/// and the invocation variables (`InvocationEnvironment`).
struct PreloadSettings: Sendable {

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

    /// The daemon's settings: continuous windows, listening, pushing.
    var daemon: DaemonSettings
    /// Whether the daemon runs the session in windows.
    var isContinuous: Bool { daemon.window != nil }

    /// Reads the settings (`SessionSettings` names them); nil when neither `STACKSAMPLER_OUTPUT`
    /// nor a daemon setting is given (the library stays idle).
    static func fromEnvironment() throws(SettingError) -> PreloadSettings? {
        let daemon = try DaemonSettings.fromEnvironment()
        let output = try read(SessionSettings.output)
        guard output != nil || daemon.isActive else { return nil }
        var configuration = ProfilerConfiguration()
        if let period = try read(SessionSettings.period) { configuration.period = period }
        if let mode = try read(SessionSettings.mode) { configuration.mode = mode }
        if let engine = try read(SessionSettings.engine) { configuration.engine = engine }
        configuration.event = try read(SessionSettings.event)
        if let period = try read(SessionSettings.eventPeriod) { configuration.eventPeriod = period }
        configuration.recordingPath = try read(SessionSettings.raw)?.replacingPercentP(with: String(getpid()))
        if let slots = try read(SessionSettings.bufferSize) { configuration.bufferSlots = slots }
        if let depth = try read(SessionSettings.maxDepth) { configuration.maxDepth = depth }
        if let root = try read(SessionSettings.debugRoot) { configuration.symbols.debugRoot = root }
        configuration.symbols.keepsSpecializations = try read(SessionSettings.specializations) ?? false
        configuration.symbols.resolvesLines = try read(SessionSettings.lines) ?? false
        if let asyncStacks = try read(SessionSettings.asyncStacks) { configuration.asyncStacks = asyncStacks }
        let invocations = try InvocationEnvironment.read(pid: String(getpid()))
        configuration.invocations = invocations.configuration
        let format = try read(SessionSettings.format)
        let outputs = (output ?? "").split(separator: ",").map { OutputTarget(path: String($0), format: format) }
        if let output, outputs.isEmpty {
            throw SettingError(description: "\(SessionSettings.output.variable)=\(output) names no file; give one or more paths separated by commas")
        }
        let options = ExportOptions(perThreadRoots: try read(SessionSettings.perThread) ?? false,
                                    processRoot: try read(SessionSettings.processRoot) ?? false,
                                    icicle: try read(SessionSettings.icicle) ?? false)
        if daemon.window != nil, configuration.recordingPath != nil {
            throw SettingError(description: "\(SessionSettings.continuous.variable) cannot be combined with \(SessionSettings.raw.variable): a raw recording keeps the whole session")
        }
        return PreloadSettings(outputPatterns: outputs, summaryPattern: try read(SessionSettings.summary),
                               configuration: configuration, options: options, invocations: invocations, daemon: daemon)
    }

    /// The value of `setting`'s variable, if set and not empty (`SettingEnvironment`).
    static func read<Value>(_ setting: Setting<Value>) throws(SettingError) -> Value? {
        try SettingEnvironment.process.value(setting)
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
