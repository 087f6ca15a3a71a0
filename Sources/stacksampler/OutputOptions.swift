import ArgumentParser
import StackSampler

/// `-o FILE` (repeatable), `--format` and `--icicle`: where profiles go and in what format,
/// shared by the commands that write profiles.
struct OutputOptions: ParsableArguments {
    @Option(name: [.short, .customLong("output")],
            help: "File to write; repeat for several. The format follows the extension (.folded/.collapsed, .svg, .pb.gz/.pprof, .speedscope.json; others: folded) unless --format is given.")
    var outputs: [String] = []

    @Option(help: "Format of every output: \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: String?

    @Flag(help: "Draw flame graphs with the root at the top (icicle graph).")
    var icicle = false

    func validate() throws {
        if let format, OutputFormat(rawValue: format) == nil {
            throw ValidationError("'\(format)' is not a format; use one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// The files to write, each with its format; `fallback` when no `-o` was given.
    func targets(fallback: [String] = []) -> [OutputTarget] {
        (outputs.isEmpty ? fallback : outputs).map { OutputTarget(path: $0, format: format.flatMap(OutputFormat.init(rawValue:))) }
    }
}
