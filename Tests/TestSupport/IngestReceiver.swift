import Foundation

/// A tiny HTTP/1.1 server on 127.0.0.1 in the test process, standing in for Pyroscope's
/// `/ingest`: it keeps every request, answers with the status it is told, and can be stopped
/// (connections refused) and started again on the same port.
package final class IngestReceiver: @unchecked Sendable {
    /// One request as received.
    package struct Request {
        package var method: String
        package var path: String
        package var query: [String: String]
        /// The raw query, as sent.
        package var rawQuery: String
        package var headers: [String: String]
        package var body: [UInt8]
    }

    private let lock = NSLock()
    private var received: [Request] = []
    private var statusToAnswer = 200
    private var listener: Int32 = -1
    private var generation = 0
    /// The port it listens on.
    package private(set) var port: UInt16 = 0

    /// A receiver not yet listening: `start()` listens.
    package init() {}

    /// The base URL of the receiver.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// Requests received so far.
    package var requests: [Request] { lock.withLock { received } }

    /// The status the next requests get.
    package func answer(_ status: Int) { lock.withLock { statusToAnswer = status } }

    /// Listens (on `port`, or any free port the first time) and serves on a thread of its own.
    package func start() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ReceiverError("socket: \(errno)") }
        var one: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socket, 16) == 0 else { close(socket); throw ReceiverError("bind/listen: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        let current = lock.withLock { () -> Int in
            listener = socket
            generation += 1
            return generation
        }
        let thread = Thread { [self] in serve(socket, generation: current) }
        thread.start()
    }

    /// Stops listening: new connections are refused until `start()`.
    package func stop() {
        let socket = lock.withLock { () -> Int32 in
            let socket = listener
            listener = -1
            generation += 1
            return socket
        }
        if socket >= 0 {
            shutdown(socket, Int32(SHUT_RDWR))
            close(socket)
        }
    }

    private func serve(_ socket: Int32, generation current: Int) {
        while lock.withLock({ generation == current }) {
            let connection = accept(socket, nil, nil)
            guard connection >= 0 else { return }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            data += buffer[..<count]
            if headerEnd == nil, let end = data.firstRange(of: Array("\r\n\r\n".utf8))?.lowerBound {
                headerEnd = end + 4
                let head = String(decoding: data[..<end], as: UTF8.self)
                for line in head.split(separator: "\r\n").dropFirst() {
                    if let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "content-length" {
                        contentLength = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
            if let headerEnd, data.count >= headerEnd + contentLength { break }
        }
        let end = headerEnd!
        let lines = String(decoding: data[..<(end - 4)], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        let target = String(requestLine[1])
        let (path, rawQuery) = target.firstIndex(of: "?").map { (String(target[..<$0]), String(target[target.index(after: $0)...])) }
            ?? (target, "")
        var query: [String: String] = [:]
        for item in URLComponents(string: "http://x/?" + rawQuery)?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let request = Request(method: String(requestLine[0]), path: path, query: query, rawQuery: rawQuery, headers: headers,
                              body: Array(data[end..<(end + contentLength)]))
        let status = lock.withLock { () -> Int in
            received.append(request)
            return statusToAnswer
        }
        let text = status == 200 ? "" : "refused by the test receiver"
        let response = "HTTP/1.1 \(status) X\r\nContent-Length: \(text.utf8.count)\r\nConnection: close\r\n\r\n\(text)"
        _ = Array(response.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Checks `request` against Pyroscope's documented `/ingest` parameters for a pprof body
    /// (docs/sources/reference-server-api, "Pyroscope Legacy HTTP API", and the handler's
    /// parsing in pkg/ingester/pyroscope/ingest_handler.go); returns what is wrong, empty if nothing.
    package static func problems(_ request: Request) -> [String] {
        var problems: [String] = []
        if request.method != "POST" { problems.append("method \(request.method), not POST") }
        if request.path != "/ingest" { problems.append("path \(request.path), not /ingest") }
        let name = request.query["name"] ?? ""
        // labelset.Parse: a service name of [A-Za-z0-9_.\-/], then optional {key=value,...}.
        if name.range(of: #"^[A-Za-z0-9_./-]+(\{([A-Za-z0-9_.]+=[^,{}]*(,[A-Za-z0-9_.]+=[^,{}]*)*)?\})?$"#,
                      options: .regularExpression) == nil {
            problems.append("name \(name) is not a Pyroscope application name")
        }
        let from = Int(request.query["from"] ?? ""), until = Int(request.query["until"] ?? "")
        if from == nil || until == nil { problems.append("from and until are not Unix seconds") }
        if let from, let until, from > until { problems.append("from \(from) after until \(until)") }
        if let from, abs(Double(from) - Date().timeIntervalSince1970) > 3600 { problems.append("from \(from) is not near now") }
        if request.query["format"] != "pprof" { problems.append("format is not pprof") }
        if let rate = request.query["sampleRate"], (Int(rate) ?? -1) < 0 { problems.append("sampleRate \(rate) is not a whole number") }
        if request.query["spyName"]?.isEmpty ?? true { problems.append("no spyName") }
        // With format=pprof the body is the profile itself: gzip-compressed profile.proto.
        if request.body.count < 2 || request.body[0] != 0x1f || request.body[1] != 0x8b { problems.append("body is not a gzip pprof") }
        // Every character of the query outside the unreserved set is percent-encoded.
        if request.rawQuery.contains(where: { "{},= ".contains($0) && $0 != "=" }) { problems.append("query not encoded: \(request.rawQuery)") }
        return problems
    }
}

/// A failure of the receiver itself.
package struct ReceiverError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// `go tool pprof -top` of pprof `bytes` (all functions, flat samples), nil when go is missing.
package func goPprofTop(_ bytes: [UInt8]) throws -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    guard let go = path.split(separator: ":").map({ "\($0)/go" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        return nil
    }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("window.pb.gz")
    try Data(bytes).write(to: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: go)
    process.arguments = ["tool", "pprof", "-top", "-nodefraction=0", "-sample_index=samples", file.path]
    process.environment = ["HOME": directory.path, "PPROF_TMPDIR": directory.path, "PATH": path,
                           "GOCACHE": directory.appendingPathComponent("cache").path]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ReceiverError("go tool pprof failed: \(text)") }
    return text
}
