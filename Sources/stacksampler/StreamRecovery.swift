import Foundation
import StackSampler

/// Makes the profile of a process that died before its exit handlers ran (SIGKILL,
/// a crash, `_exit`) from the raw stream it left behind.
enum StreamRecovery {
    /// Rebuilds the profile from `rawPath` into `targets`; returns the lines to tell the user.
    static func recover(rawPath: String, into targets: [OutputTarget], options: ExportOptions, symbols: SymbolOptions,
                        ending: ChildProcess.Ending) -> [String] {
        let recording: RawRecording
        do {
            recording = try RawRecording(contentsOf: rawPath, toleratingTruncatedTail: true)
        } catch {
            return ["no profile was written: the program \(ending.description) before its exit handlers ran, and its stream is unusable: \(error)"]
        }
        let (profile, warnings) = Profile.fromRecording(recording, symbols: symbols)
        do {
            for target in targets { try profile.write(to: target.path, format: target.format, options: options) }
        } catch {
            return ["the program \(ending.description) before its exit handlers ran; rebuilding its profile failed: \(error)"]
        }
        let note = "the program \(ending.description) before its exit handlers ran: profile rebuilt from what it streamed (up to its last flush, at most 250 ms before the end)"
        return [note] + profile.summary.split(separator: "\n").map { String($0.dropFirst("stacksampler: ".count)) }
            + warnings + ["wrote \(targets.map(\.path).joined(separator: ", "))"]
    }
}
