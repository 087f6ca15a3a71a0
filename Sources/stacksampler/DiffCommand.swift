import ArgumentParser
import Foundation
import StackSampler

/// `stacksampler diff BEFORE AFTER -o diff.svg`: a differential flame graph of two collapsed-stack files.
struct DiffCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Draw a differential flame graph: AFTER's shape, red where a function's share grew since BEFORE, blue where it shrank.",
        discussion: "Shares are normalized by each profile's total samples. Example: stacksampler diff old.folded new.folded -o diff.svg"
    )

    @Argument(help: "Collapsed stacks of the baseline.")
    var before: String

    @Argument(help: "Collapsed stacks to compare with it.")
    var after: String

    @Option(name: [.short, .customLong("output")], help: "The SVG file to write.")
    var output: String

    @Flag(help: "Draw the root at the top (icicle graph).")
    var icicle = false

    func validate() throws {
        if let format = OutputFormat(path: output), format != .svg {
            throw ValidationError("a differential flame graph is an SVG file; \(output) names \(format.rawValue)")
        }
    }

    func run() throws {
        let baseline = try ReportCommand.readProfile(before)
        let profile = try ReportCommand.readProfile(after)
        let options = ExportOptions(perThreadRoots: !profile.threads.isEmpty, icicle: icicle)
        let bytes = profile.differentialFlameGraph(against: baseline, options: options)
        guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
            throw ValidationErrorText("cannot write \(output)")
        }
        printError("wrote \(output) (before \(baseline.sampleCount) samples, after \(profile.sampleCount))")
    }
}
