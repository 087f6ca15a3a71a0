import ArgumentParser
import Foundation
import StackSampler

/// `stacksampler report INPUT -o OUTPUT`: converts collapsed stacks into any output format,
/// after optional filters, and/or prints the top functions.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Convert collapsed stacks (ours, FlameGraph's, perf's or async-profiler's) into a flame graph, pprof or speedscope.",
        discussion: """
            Filters apply in this order: --thread, --include, --exclude, --reverse, --min-percent.
            Example: stacksampler report app.folded --exclude '^poll$' --reverse -o callers.svg --top 20
            """
    )

    @Argument(help: "Collapsed stacks, or a raw recording (STACKSAMPLER_RAW), to read ('-' for standard input).")
    var input: String

    @OptionGroup var output: OutputOptions

    @Option(help: "Keep only stacks with a frame whose name matches this regular expression.")
    var include: String?

    @Option(help: "Drop stacks with a frame whose name matches this regular expression.")
    var exclude: String?

    @Option(help: "Keep only this thread's stacks: its name or tid (needs per-thread roots [name tid=N]).")
    var thread: String?

    @Option(help: "Cut off call paths with less than this percentage of all samples (their samples stay with the caller).")
    var minPercent: Double?

    @Flag(help: "Reverse every stack (leaf first), to see the callers of hot functions.")
    var reverse = false

    @Option(help: "Print the N functions with the most self samples, with self and total samples.")
    var top: Int?

    func validate() throws {
        guard !output.outputs.isEmpty || top != nil else { throw ValidationError("nothing to do: give -o OUTPUT and/or --top N") }
        if let minPercent, !(0...100).contains(minPercent) { throw ValidationError("--min-percent \(minPercent) is outside 0...100") }
        if let top, top < 1 { throw ValidationError("--top \(top) must be at least 1") }
    }

    func run() throws {
        var profile = try Self.readProfile(input)
        // Written back with the roots it was read with: a thread's process is known only from a
        // process root (`record --follow-children`).
        let options = ExportOptions(perThreadRoots: !profile.threads.isEmpty,
                                    processRoot: profile.threads.contains { $0.processID != 0 }, icicle: output.icicle)
        if let thread {
            guard !profile.threads.isEmpty else {
                throw ValidationErrorText("\(input) has no per-thread roots ([name tid=N] first frames), so --thread cannot select one; record with --per-thread")
            }
            profile = profile.keepingThreads(named: thread)
        }
        if let include {
            let pattern = try Self.regex(include, option: "--include")
            profile = profile.keepingStacks { $0.contains(pattern) }
        }
        if let exclude {
            let pattern = try Self.regex(exclude, option: "--exclude")
            profile = profile.removingStacks { $0.contains(pattern) }
        }
        if reverse { profile = profile.reversingStacks() }
        if let minPercent { profile = profile.trimmingPaths(below: minPercent, options: options) }
        if let top { print(profile.topTable(limit: top), terminator: "") }
        for target in output.targets() {
            try profile.write(to: target.path, format: target.format, options: options)
            printError("wrote \(target.path) (\(target.format.rawValue), \(profile.sampleCount) samples)")
        }
    }

    /// The profile at `path` ('-': standard input), titled with the path: collapsed stacks, or a
    /// raw recording (`STACKSAMPLER_RAW`) symbolized here, with a warning for each module whose
    /// build id differs from the one recorded.
    static func readProfile(_ path: String) throws -> Profile {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw ValidationErrorText("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            data = contents
        }
        if RawRecording.isRecording(data) {
            do {
                let recording = try RawRecording(bytes: [UInt8](data), toleratingTruncatedTail: true)
                let (profile, warnings) = Profile.fromRecording(recording)
                warnings.forEach { printError("\(path): \($0)") }
                return profile
            } catch {
                throw ValidationErrorText("\(path): \(error)")
            }
        }
        do {
            return try Profile(collapsedStacks: String(decoding: data, as: UTF8.self), command: path)
        } catch {
            throw ValidationErrorText("\(path): \(error)")
        }
    }

    private static func regex(_ pattern: String, option: String) throws -> Regex<AnyRegexOutput> {
        do { return try Regex(pattern) } catch { throw ValidationErrorText("\(option) '\(pattern)' is not a regular expression: \(error)") }
    }
}
