import ArgumentParser
import Foundation
import StackSampler

/// The `record` options for reconstructed invocations and stall reports, passed to the preload
/// library as `STACKSAMPLER_INVOCATION*` and `STACKSAMPLER_STALL*` variables.
struct InvocationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also write the function calls reconstructed from the samples, with start and duration.", valueName: "file"))
    var invocations: String?

    @Option(help: "Format of the invocations file: chrome (Perfetto, chrome://tracing), speedscope, or spans.")
    var invocationFormat: String = InvocationFormat.chrome.rawValue

    @Option(help: "Keep invocations seen in at least this many samples (one sample tells no duration).")
    var invocationMinSamples: Int = 2

    @Option(help: ArgumentHelp("Keep invocations lasting at least this long: 5ms, 500us.", valueName: "duration"))
    var invocationMinDuration: String?

    @Option(help: ArgumentHelp("Keep only functions whose name matches: a glob with * and ?, else a substring.", valueName: "pattern"))
    var invocationFilter: String?

    @Option(help: ArgumentHelp("Keep only invocations fewer than this many frames from the root.", valueName: "depth"))
    var invocationMaxDepth: Int?

    @Option(help: "Invocations kept in memory; later ones are counted as dropped.")
    var invocationCapacity: Int = 1_000_000

    @Option(help: ArgumentHelp("Report a call running longer than this, once, while it runs: 250ms, 1s.", valueName: "duration"))
    var stallThreshold: String?

    @Option(help: ArgumentHelp("Also write stall reports to this file (they always go to stderr).", valueName: "file"))
    var stalls: String?

    func validate() throws {
        guard InvocationFormat(rawValue: invocationFormat) != nil else {
            throw ValidationError("--invocation-format \(invocationFormat) is not a format; use chrome, speedscope or spans")
        }
        for (name, text) in [("--invocation-min-duration", invocationMinDuration), ("--stall-threshold", stallThreshold)] {
            guard let text else { continue }
            do { _ = try PeriodParser.parse(text) } catch {
                throw ValidationError("\(name) \(text) is not a duration; use a number with a unit such as 250ms or 1s")
            }
        }
        guard invocationMinSamples >= 1 else { throw ValidationError("--invocation-min-samples must be at least 1") }
        guard invocationCapacity >= 0 else { throw ValidationError("--invocation-capacity must not be negative") }
        if let invocationMaxDepth, invocationMaxDepth < 1 { throw ValidationError("--invocation-max-depth must be at least 1") }
    }

    /// The preload library's variables for these options.
    var environment: [String: String] {
        var variables: [String: String] = [
            "STACKSAMPLER_INVOCATION_FORMAT": invocationFormat,
            "STACKSAMPLER_INVOCATION_MIN_SAMPLES": String(invocationMinSamples),
            "STACKSAMPLER_INVOCATION_CAPACITY": String(invocationCapacity),
        ]
        variables["STACKSAMPLER_INVOCATIONS"] = invocations.map(Self.absolute)
        variables["STACKSAMPLER_INVOCATION_MIN_DURATION"] = invocationMinDuration
        variables["STACKSAMPLER_INVOCATION_FILTER"] = invocationFilter
        variables["STACKSAMPLER_INVOCATION_MAX_DEPTH"] = invocationMaxDepth.map(String.init)
        variables["STACKSAMPLER_STALL_THRESHOLD"] = stallThreshold
        variables["STACKSAMPLER_STALLS"] = stalls.map(Self.absolute)
        return variables
    }

    private static func absolute(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
