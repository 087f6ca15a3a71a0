import Foundation

/// Merges the collapsed-stack profiles of several processes (one file each, every
/// stack already under its `[name pid=N]` root) into one file.
enum ProcessTreeProfile {
    /// Merges every `.folded` file in `directory` into `output`; returns how many processes there were.
    static func merge(directory: String, into output: String) throws -> Int {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".folded") }.sorted()
        var counts: [String: Int] = [:]
        for file in files {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let space = line.lastIndex(of: " "), let count = Int(line[line.index(after: space)...]) else { continue }
                counts[String(line[..<space]), default: 0] += count
            }
        }
        let merged = counts.keys.sorted().map { "\($0) \(counts[$0]!)\n" }.joined()
        try merged.write(toFile: output, atomically: true, encoding: .utf8)
        return files.count
    }
}
