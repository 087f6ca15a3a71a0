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

    @Option(help: "cpu (each thread per period of its CPU time) or wall (every thread per period of real time, running or blocked).")
    var mode: String = SessionSettings.mode.defaultValue!.rawValue

    @Option(help: "Time between two samples of a thread: 10ms, 500us, 1s (\(SessionSettings.period.range!)).")
    var period: String = PeriodParser.format(SessionSettings.period.defaultValue!)

    @Option(help: "cpu mode: auto (perf_event counters when the kernel allows them, else timers), perf, or timer (CPU-time timers, which fire at scheduler ticks only).")
    var engine: String = SessionSettings.engine.defaultValue!.rawValue

    @Option(help: "cpu mode: sample an event instead of CPU time: page-faults, context-switches, cpu-migrations, cycles, instructions, cache-misses, branch-misses (perf engine; hardware events need a PMU).")
    var event: String?

    @Option(help: "With --event: a sample every this many events, a number \(SessionSettings.eventPeriod.range!).")
    var eventPeriod: Int = SessionSettings.eventPeriod.defaultValue!

    /// Where profiles go (`stacksampler.folded` when no `-o` is given); `%p` becomes the pid.
    @OptionGroup var output: OutputOptions

    @Flag(help: "Add a root frame [name tid=N] per thread instead of merging threads.")
    var perThread = false

    @Option(help: "Frames kept per sample (\(SessionSettings.maxDepth.range!)); deeper stacks are truncated and marked.")
    var maxDepth: Int = SessionSettings.maxDepth.defaultValue!

    @Option(help: "Samples the buffer holds between two drains (cpu mode: drained when it could be a quarter full, every 5-100 ms; wall mode: every tick); beyond it samples are dropped and counted (\(SessionSettings.bufferSize.range!)). Memory: about 2 KB per sample at the default depth.")
    var bufferSize: Int = SessionSettings.bufferSize.defaultValue!

    @Flag(help: "Profile the whole process tree (fork and exec) into one profile, with a root frame [name pid=N] per process.")
    var followChildren = false

    @Option(help: "Where separate debug files are looked up (.build-id/xx/yyyy.debug, debuglink names).")
    var debugRoot: String?

    @Flag(help: "Name specializations of Swift generic functions apart instead of as their generic function.")
    var keepSpecializations = false

    @Flag(help: "Show Swift jobs with their machine stacks (under the executor) instead of their task's async callers.")
    var noAsyncStacks = false

    @Flag(help: "Read DWARF for source lines (speedscope files, pprof lines) and show inlined calls as frames of their own (name_[i]). Off by default: it costs time and memory.")
    var lines = false

    @OptionGroup(title: "Invocations and stalls")
    var invocationOptions: InvocationOptions

    @Option(help: "Continuous mode: sampling never stops, and every window of this length (60s, 10s, 500ms; \(SessionSettings.continuous.range!)) becomes a profile of its own, written as it ends; put %t in -o for a file per window (the window's start, UTC). Each window's summary goes to stderr.")
    var continuous: String?

    @Option(help: "With --continuous and %t in -o: keep only the newest N window files (N \(SessionSettings.keep.range!)).")
    var keep: Int?

    @Argument(parsing: .captureForPassthrough, help: "The command to profile, after --.")
    var command: [String] = []

    func validate() throws {
        do {
            _ = try SessionSettings.period.parse(period, from: .commandLine)
            _ = try SessionSettings.mode.parse(mode, from: .commandLine)
            _ = try SessionSettings.engine.parse(engine, from: .commandLine)
            if let event { _ = try SessionSettings.event.parse(event, from: .commandLine) }
            _ = try SessionSettings.eventPeriod.parse(String(eventPeriod), from: .commandLine)
            _ = try SessionSettings.bufferSize.parse(String(bufferSize), from: .commandLine)
            _ = try SessionSettings.maxDepth.parse(String(maxDepth), from: .commandLine)
        } catch {
            throw ValidationError(error.description)
        }
        if let continuous {
            do {
                _ = try SessionSettings.continuous.parse(continuous, from: .commandLine)
                if let keep { _ = try SessionSettings.keep.parse(String(keep), from: .commandLine) }
            } catch {
                throw ValidationError(error.description)
            }
            if followChildren { throw ValidationError("--continuous profiles one process; it cannot be combined with --follow-children") }
        } else if invocationOptions.calls != nil {
            throw ValidationError("--calls goes with --continuous: it is each window's calls table")
        } else if keep != nil {
            throw ValidationError("--keep goes with --continuous (and %t in the output path)")
        }
        if let path = output.outputs.first(where: { $0.contains(",") }) {
            throw ValidationError("output path '\(path)' contains a comma, which separates outputs in STACKSAMPLER_OUTPUT")
        }
        if let first = command.first, first.hasPrefix("-"), first != "--" {
            throw ValidationError("unknown option '\(first)'")
        }
        guard !arguments.isEmpty else { throw ValidationError("no command given; put it after --, as in: stacksampler record -- ./app") }
    }

    /// Where names come from, as the options ask (for a profile rebuilt here from the stream).
    private var symbolOptions: SymbolOptions {
        var options = SymbolOptions(keepsSpecializations: keepSpecializations, resolvesLines: lines)
        if let debugRoot { options.debugRoot = URL(fileURLWithPath: debugRoot).standardizedFileURL.path }
        return options
    }

    /// The command line after the `--` separator.
    private var arguments: [String] {
        command.first == "--" ? Array(command.dropFirst()) : command
    }

    /// A new directory for this run's summaries and raw streams, in the temporary directory:
    /// made by mkdtemp, so it is this user's alone (0700) and never one that already existed.
    private func makeScratchDirectory() throws -> URL {
        let temporary = FileManager.default.temporaryDirectory
        var template = Array(temporary.appendingPathComponent("stacksampler-XXXXXX").path.utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            printError("cannot create a scratch directory in \(temporary.path): \(String(cString: strerror(errno)))")
            throw ExitCode(1)
        }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    func run() throws {
        guard let executable = ExecutableLookup.find(arguments[0]) else {
            printError("command not found: \(arguments[0])")
            throw ExitCode(127)
        }
        let library = try PreloadLibrary.locate()
        let targets = output.targets(fallback: ["stacksampler.folded"]).map {
            OutputTarget(path: URL(fileURLWithPath: $0.path).standardizedFileURL.path, format: $0.format)
        }
        let summaryDirectory = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: summaryDirectory) }
        let summaryPattern = summaryDirectory.appendingPathComponent("summary-%p").path

        var environment = ProcessInfo.processInfo.environment
        environment[SessionSettings.ownerVariable] = nil
        environment["LD_PRELOAD"] = [library, environment["LD_PRELOAD"]].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
        let processDirectory = summaryDirectory.appendingPathComponent("processes")
        try FileManager.default.createDirectory(at: processDirectory, withIntermediateDirectories: true)
        if followChildren {
            // Each process writes a raw recording of its own (below); they are merged into the targets.
            environment[SessionSettings.output.variable] = processDirectory.appendingPathComponent("%p.folded").path
        } else {
            environment[SessionSettings.output.variable] = targets.map(\.path).joined(separator: ",")
            environment[SessionSettings.format.variable] = output.format
        }
        environment[SessionSettings.processRoot.variable] = followChildren ? "1" : "0"
        environment[SessionSettings.icicle.variable] = output.icicle ? "1" : nil
        environment[SessionSettings.period.variable] = period
        environment[SessionSettings.mode.variable] = mode
        environment[SessionSettings.engine.variable] = engine
        environment[SessionSettings.event.variable] = event
        environment[SessionSettings.eventPeriod.variable] = String(eventPeriod)
        environment[SessionSettings.maxDepth.variable] = String(maxDepth)
        environment[SessionSettings.bufferSize.variable] = String(bufferSize)
        environment[SessionSettings.perThread.variable] = perThread ? "1" : "0"
        environment[SessionSettings.summary.variable] = summaryPattern
        let rawPattern = summaryDirectory.appendingPathComponent("raw-%p").path
        environment[SessionSettings.raw.variable] = rawPattern
        if keepSpecializations { environment[SessionSettings.specializations.variable] = "1" }
        if lines { environment[SessionSettings.lines.variable] = "1" }
        if noAsyncStacks { environment[SessionSettings.asyncStacks.variable] = "0" }
        if let debugRoot { environment[SessionSettings.debugRoot.variable] = URL(fileURLWithPath: debugRoot).standardizedFileURL.path }
        environment.merge(invocationOptions.environment) { _, option in option }

        if let continuous {
            // Every window is written by the program's own daemon as it ends: nothing to rebuild here.
            environment[SessionSettings.continuous.variable] = continuous
            environment[SessionSettings.keep.variable] = keep.map(String.init)
            environment[SessionSettings.raw.variable] = nil
            environment[SessionSettings.summary.variable] = "-"
            let ending = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment).waitForExit()
            if case .signalled = ending { printError("the program \(ending.description); its last, partial window was not written") }
            throw ExitCode(ending.shellStatus)
        }
        let child = try ChildProcess.spawn(executable: executable, arguments: arguments, environment: environment)
        let ending = child.waitForExit()
        let summaryPath = summaryPattern.replacingOccurrences(of: "%p", with: String(child.pid))
        if let summary = try? String(contentsOfFile: summaryPath, encoding: .utf8) {
            printError(summary, raw: true)
        } else {
            let pid = String(child.pid)
            let rebuilt = followChildren ? [OutputTarget(path: processDirectory.appendingPathComponent("\(pid).folded").path)] : targets
            let lines = StreamRecovery.recover(rawPath: rawPattern.replacingOccurrences(of: "%p", with: pid), into: rebuilt,
                                               options: ExportOptions(perThreadRoots: perThread, processRoot: followChildren, icicle: output.icicle),
                                               symbols: symbolOptions, ending: ending)
            lines.forEach { printError($0) }
        }
        if followChildren {
            let (count, warnings) = try ProcessTreeProfile.merge(
                directory: summaryDirectory.path, root: child.pid, into: targets, options: ExportOptions(perThreadRoots: perThread, icicle: output.icicle),
                symbols: symbolOptions, command: arguments.joined(separator: " "))
            warnings.forEach { printError($0) }
            printError("merged the profiles of \(count) processes into \(targets.map(\.path).joined(separator: ", "))")
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
