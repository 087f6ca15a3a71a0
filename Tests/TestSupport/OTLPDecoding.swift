import Foundation

/// Decodes an OTLP body with the official protobuf definitions (Tests/Programs/otlp_collector.py
/// over PyPI's opentelemetry-proto) and returns its JSON summary.
package func decodedOTLP(_ body: [UInt8], signal: String) throws -> [String: Any] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(getpid())-\(UUID().uuidString).bin")
    try Data(body).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", root.path + "/Tests/Programs/otlp_collector.py", "--decode", signal, file.path]
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let problem = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0, let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw DecodeFailure(description: "otlp_collector.py --decode \(signal) failed (is opentelemetry-proto installed? Scripts/setup.sh): \(problem)")
    }
    return json
}

/// Why a body could not be decoded (by the official definitions, or as a gzip stream).
package struct DecodeFailure: Error, CustomStringConvertible {
    package var description: String
}
