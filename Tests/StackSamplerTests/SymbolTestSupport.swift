import Foundation
import Testing

/// Namespace for the symbolization suites, so `swift test --filter SymbolTests` selects them all.
enum SymbolTests {}

/// Builds throwaway native code with the system toolchain and reads it back with binutils.
struct NativeScratch {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("stacksampler-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Path of `name` inside the scratch directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes `source` to `name.c` and compiles it with `flags` into `name` (or `output`).
    @discardableResult
    func compile(_ source: String, name: String, output: String? = nil, flags: [String]) throws -> String {
        let sourcePath = path("\(name).c")
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let outputPath = path(output ?? name)
        try Self.run("/usr/bin/gcc", flags + ["-o", outputPath, sourcePath])
        return outputPath
    }

    /// A copy of `binary` without `.symtab` (what `strip` leaves: `.dynsym` only), stripped
    /// with `options` added (e.g. `--strip-unneeded`).
    func stripped(_ binary: String, as name: String, options: [String] = []) throws -> String {
        let outputPath = path(name)
        try Self.run("/usr/bin/strip", options + ["-o", outputPath, binary])
        return outputPath
    }

    /// `nm` values of the defined symbols of `binary`, by name.
    static func nmValues(_ binary: String) throws -> [String: UInt] {
        var values: [String: UInt] = [:]
        for line in try run("/usr/bin/nm", ["--defined-only", binary]).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count == 3, let value = UInt(fields[0], radix: 16) else { continue }
            values[String(fields[2])] = value
        }
        return values
    }

    /// The GNU build id `readelf -n` reports for `binary`, lowercase hex.
    static func readelfBuildID(_ binary: String) throws -> String? {
        let notes = try run("/usr/bin/readelf", ["-n", binary])
        guard let line = notes.split(separator: "\n").first(where: { $0.contains("Build ID:") }) else { return nil }
        return line.split(separator: " ").last.map { $0.lowercased() }
    }

    /// Runs a program to completion and returns its standard output; throws on failure.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ScratchError.failed("\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    enum ScratchError: Error { case failed(String) }
}
