import ArgumentParser
import Foundation
import StackSampler

/// The `record` options for reconstructed invocations and stall reports, passed to the preload
/// library as `STACKSAMPLER_INVOCATION*` and `STACKSAMPLER_STALL*` variables.
struct InvocationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also write the function calls reconstructed from the samples, with start and duration (with --continuous: each window's, %t for a file per window; 1: no file, for the calls endpoints).", valueName: "file"))
    var invocations: String?

    @Option(help: ArgumentHelp("With --continuous: write each window's calls table (count, p50, p90, p99, max and slowest calls of each function) here; .json for JSON, else text; %t for a file per window.", valueName: "file"))
    var calls: String?

    @Option(help: "Format of the invocations file: chrome (Perfetto, chrome://tracing), speedscope, or spans.")
    var invocationFormat: String = SessionSettings.invocationFormat.defaultValue!.rawValue

    @Option(help: "Keep invocations seen in at least this many samples (one sample tells no duration).")
    var invocationMinSamples: Int = SessionSettings.invocationMinSamples.defaultValue!

    @Option(help: ArgumentHelp("Keep invocations lasting at least this long: 5ms, 500us.", valueName: "duration"))
    var invocationMinDuration: String?

    @Option(help: ArgumentHelp("Keep only functions whose name matches: a glob with * and ?, else a substring.", valueName: "pattern"))
    var invocationFilter: String?

    @Option(help: ArgumentHelp("Keep only invocations fewer than this many frames from the root.", valueName: "depth"))
    var invocationMaxDepth: Int?

    @Option(help: "Invocations kept in memory; later ones are counted as dropped.")
    var invocationCapacity: Int = SessionSettings.invocationCapacity.defaultValue!

    @Option(help: ArgumentHelp("Report a call running longer than this, once, while it runs: 250ms, 1s.", valueName: "duration"))
    var stallThreshold: String?

    @Option(help: ArgumentHelp("Also write stall reports to this file (they always go to stderr).", valueName: "file"))
    var stalls: String?

    func validate() throws {
        do {
            _ = try SessionSettings.invocationFormat.parse(invocationFormat, from: .commandLine)
            if let invocationMinDuration { _ = try SessionSettings.invocationMinDuration.parse(invocationMinDuration, from: .commandLine) }
            if let stallThreshold { _ = try SessionSettings.stallThreshold.parse(stallThreshold, from: .commandLine) }
            _ = try SessionSettings.invocationMinSamples.parse(String(invocationMinSamples), from: .commandLine)
            _ = try SessionSettings.invocationCapacity.parse(String(invocationCapacity), from: .commandLine)
            if let invocationMaxDepth { _ = try SessionSettings.invocationMaxDepth.parse(String(invocationMaxDepth), from: .commandLine) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The preload library's variables for these options.
    var environment: [String: String] {
        var variables: [String: String] = [
            SessionSettings.invocationFormat.variable: invocationFormat,
            SessionSettings.invocationMinSamples.variable: String(invocationMinSamples),
            SessionSettings.invocationCapacity.variable: String(invocationCapacity),
        ]
        variables[SessionSettings.invocations.variable] = invocations.map { $0 == "1" ? $0 : Self.absolute($0) }
        variables[SessionSettings.calls.variable] = calls.map(Self.absolute)
        variables[SessionSettings.invocationMinDuration.variable] = invocationMinDuration
        variables[SessionSettings.invocationFilter.variable] = invocationFilter
        variables[SessionSettings.invocationMaxDepth.variable] = invocationMaxDepth.map(String.init)
        variables[SessionSettings.stallThreshold.variable] = stallThreshold
        variables[SessionSettings.stalls.variable] = stalls.map(Self.absolute)
        return variables
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
