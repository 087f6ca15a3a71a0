import Foundation
import StackSampler

/// Merges the collapsed-stack profiles of several processes (one file each, every
/// stack already under its `[name pid=N]` root) into one profile, written to every target.
enum ProcessTreeProfile {
    /// Merges every `.folded` file in `directory` into `targets`; returns how many processes there were.
    static func merge(directory: String, into targets: [OutputTarget], options: ExportOptions, command: String) throws -> Int {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".folded") }.sorted()
        let text = try files.map { try String(contentsOfFile: directory + "/" + $0, encoding: .utf8) }.joined()
        let profile = try Profile(collapsedStacks: text, command: command)
        for target in targets { try profile.write(to: target.path, format: target.format, options: options) }
        return files.count
    }
}
