import Foundation
import StackSampler

/// Merges the raw recordings of the processes of a tree (one file each, `raw-PID`) into one
/// profile, written to every target: each process named through its own recorded mappings,
/// so every format keeps its units, mappings and lines, under a `[name pid=N]` root per process.
enum ProcessTreeProfile {
    /// Merges every `raw-*` recording in `directory` into `targets`; `root` is the process
    /// the tree started from. Returns how many processes there were and the warnings to show.
    static func merge(directory: String, root: Int32, into targets: [OutputTarget], options: ExportOptions,
                      symbols: SymbolOptions, command: String) throws -> (processes: Int, warnings: [String]) {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("raw-") }.sorted()
        var profiles: [Profile] = []
        var warnings: [String] = []
        for file in files {
            do {
                let recording = try RawRecording(contentsOf: directory + "/" + file, toleratingTruncatedTail: true)
                let (profile, notes) = Profile.fromRecording(recording, symbols: symbols)
                profiles.append(profile)
                warnings += notes.map { "process \(profile.processID): \($0)" }
            } catch {
                warnings.append("\(file) is left out: \(error)")
            }
        }
        guard let merged = Profile.mergingProcesses(profiles, root: root, command: command) else {
            throw ValidationErrorText("no process of the tree left a recording in \(directory)")
        }
        var shown = options
        shown.processRoot = true
        for target in targets { try merged.write(to: target.path, format: target.format, options: shown) }
        return (profiles.count, warnings)
    }
}
