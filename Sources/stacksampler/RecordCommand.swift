import ArgumentParser
import Foundation
import StackSampler

/// `stacksampler record … -- COMMAND`: runs COMMAND under the preload library,
/// writes its profile, prints a summary and exits with COMMAND's status.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Run a command under the profiler and write its profile.",
        discussion: "Example: stacksampler record --mode wall --period 1ms -o app.svg -o app.folded -- ./app --flag"
    )

    @Option(help: "cpu (samples on-CPU time, SIGPROF) or wall (all threads on a schedule, SIGALRM).")
    var mode: String = "cpu"

    @Option(help: "Time between two samples of a thread: 10ms, 500us, 1s (from 50us to 60s).")
    var period: String = "10ms"

    /// Where profiles go (`stacksampler.folded` when no `-o` is given); `%p` becomes the pid.
    @OptionGroup var output: OutputOptions

    @Flag(help: "Add a root frame [name tid=N] per thread instead of merging threads.")
    var perThread = false

    @Option(help: "Frames kept per sample; deeper stacks are truncated and marked.")
    var maxDepth: Int = 256

    @Argument(parsing: .captureForPassthrough, help: "The command to profile, after --.")
    var command: [String] = []

    func validate() throws {
        do { _ = try PeriodParser.parse(period) } catch { throw ValidationError("\(error)") }
        guard SamplingMode(rawValue: mode) != nil else { throw ValidationError("\(ProfilerError.invalidMode(mode))") }
        if let path = output.outputs.first(where: { $0.contains(",") }) {
            throw ValidationError("output path '\(path)' contains a comma, which separates outputs in STACKSAMPLER_OUTPUT")
        }
        guard (1...4096).contains(maxDepth) else { throw ValidationError("--max-depth \(maxDepth) is outside 1...4096") }
        if let first = command.first, first.hasPrefix("-"), first != "--" {
            throw ValidationError("unknown option '\(first)'")
        }
        guard !arguments.isEmpty else { throw ValidationError("no command given; put it after --, as in: stacksampler record -- ./app") }
    }

    /// The command line after the `--` separator.
    private var arguments: [String] {
        command.first == "--" ? Array(command.dropFirst()) : command
    }

    func run() throws {
        guard let executable = ExecutableLookup.find(arguments[0]) else {
            printError("command not found: \(arguments[0])")
            throw ExitCode(127)
        }
        let library = try PreloadLibrary.locate()
        let outputPaths = output.targets(fallback: ["stacksampler.folded"]).map { URL(fileURLWithPath: $0.path).standardizedFileURL.path }
        let summaryDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("stacksampler-\(getpid())")
        try FileManager.default.createDirectory(at: summaryDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: summaryDirectory) }
        let summaryPattern = summaryDirectory.appendingPathComponent("summary-%p").path

        var environment = ProcessInfo.processInfo.environment
        environment["STACKSAMPLER_OWNER_PID"] = nil
        environment["LD_PRELOAD"] = [library, environment["LD_PRELOAD"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
        environment["STACKSAMPLER_OUTPUT"] = outputPaths.joined(separator: ",")
        environment["STACKSAMPLER_FORMAT"] = output.format
        environment["STACKSAMPLER_ICICLE"] = output.icicle ? "1" : nil
        environment["STACKSAMPLER_PERIOD"] = period
        environment["STACKSAMPLER_MODE"] = mode
        environment["STACKSAMPLER_MAX_DEPTH"] = String(maxDepth)
        environment["STACKSAMPLER_PER_THREAD"] = perThread ? "1" : "0"
        environment["STACKSAMPLER_SUMMARY"] = summaryPattern
        if environment["SWIFT_BACKTRACE"] == nil && !ExecutableLookup.linksSwiftRuntime(executable) {
            // The Swift runtime the library brings would install crash handlers in a non-Swift program.
            environment["SWIFT_BACKTRACE"] = "enable=no"
        }

        let child = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment)
        let ending = child.waitForExit()
        let summaryPath = summaryPattern.replacingOccurrences(of: "%p", with: String(child.pid))
        if let summary = try? String(contentsOfFile: summaryPath, encoding: .utf8) {
            printError(summary, raw: true)
        } else {
            printError("no profile was written: the program \(ending.description) without running its exit handlers (_exit, exec or a fatal signal)")
        }
        if case .signalled = ending { printError("the program \(ending.description)") }
        throw ExitCode(ending.shellStatus)
    }
}

/// Writes a line to standard error, prefixed unless `raw`.
func printError(_ text: String, raw: Bool = false) {
    let line = raw ? text : "stacksampler: \(text)\n"
    FileHandle.standardError.write(Data(line.utf8))
}
