import Foundation
import Testing

/// `go tool pprof` (Debian's golang-go), to check that pprof files are read as intended.
enum GoPprof {
    /// The `go` executable on PATH, if any.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/go" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Why tests that need it are skipped.
    static let skipReason: Comment = "go is not installed (apt-get install golang-go, or run Scripts/setup.sh)"

    /// Names as the profile wrote them: by default pprof shortens what looks like a demangled C++
    /// name (drops its parameter and template lists), which a Swift runtime frame sampled while the
    /// profiler starts in the program's main thread can be.
    private static let namesAsWritten = "-symbolize=none"

    /// Self samples of the functions that have any, from `go tool pprof -top -sample_index=samples`
    /// (all of them: by default pprof leaves out functions under 0.5 % of the samples).
    static func selfSamples(_ profile: String, in directory: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        var inTable = false
        for line in try run(["-top", namesAsWritten, "-nodefraction=0", "-nodecount=1000000", "-sample_index=samples", profile], in: directory).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            if fields.first == "flat" { inTable = true; continue }
            guard inTable, fields.count == 6, let flat = Int(fields[0]), flat > 0 else { continue }
            counts[String(fields[5].drop { $0 == " " }), default: 0] += flat
        }
        return counts
    }

    /// The stacks (`root;…;leaf`, function names) and their samples from `go tool pprof -traces`.
    static func stacks(_ profile: String, in directory: String) throws -> [String: Int] {
        var stacks: [String: Int] = [:]
        var frames: [String] = []
        var count = 0
        func finish() {
            if !frames.isEmpty { stacks[frames.reversed().joined(separator: ";"), default: 0] += count }
            frames = []
        }
        for line in try run(["-traces", namesAsWritten, "-sample_index=samples", profile], in: directory).split(separator: "\n") {
            if line.hasPrefix("-----------+") { finish(); continue }
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("thread_name:") || trimmed.hasPrefix("thread_id:") { continue }
            if line.hasPrefix("             "), !frames.isEmpty {
                frames.append(String(trimmed))
            } else if let space = trimmed.firstIndex(of: " "), let value = Int(trimmed[..<space]) {
                count = value
                frames = [String(trimmed[space...].drop { $0 == " " })]
            }
        }
        finish()
        return stacks
    }

    /// `go tool pprof -raw`: the sample types, samples, locations and mappings as text.
    static func raw(_ profile: String, in directory: String) throws -> String {
        try run(["-raw", profile], in: directory)
    }

    private static func run(_ arguments: [String], in directory: String) throws -> String {
        guard let go = executable else { throw HarnessError("go is not installed") }
        let result = try ChildProcess.run(go, ["tool", "pprof"] + arguments, environment: ["HOME": directory, "PPROF_TMPDIR": directory],
                                          in: directory, timeout: .seconds(120))
        guard result.termination == .exited(0) else { throw HarnessError("go tool pprof \(arguments.joined(separator: " ")) failed: \(result)") }
        return result.stdout
    }
}
