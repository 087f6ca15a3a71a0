import Foundation

/// A minimal HTTP client over a unix socket, sending exactly the bytes given (good or not).
enum RawHTTP {
    /// What came back: the status (nil if no status line), headers and body.
    struct Reply {
        let raw: [UInt8]
        var text: String { String(decoding: raw, as: UTF8.self) }
        var status: Int? {
            let line = text.prefix { $0 != "\r" && $0 != "\n" }
            let fields = line.split(separator: " ")
            return fields.count >= 2 && fields[0].hasPrefix("HTTP/") ? Int(fields[1]) : nil
        }
        func header(_ name: String) -> String? {
            let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
            for line in head.split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
        /// Whether the whole response (headers and Content-Length bytes of body) has arrived.
        var isComplete: Bool {
            guard let end = raw.indices.first(where: { raw[$0...].starts(with: [13, 10, 13, 10]) }) else { return false }
            guard let length = header("Content-Length").flatMap({ Int($0) }) else { return false }
            return raw.count - (end + 4) >= length || text.hasPrefix("HEAD")
        }

        var body: String {
            guard let range = text.range(of: "\r\n\r\n") else { return "" }
            return String(text[range.upperBound...])
        }
    }

    /// Sends `bytes` on a new connection to `path` and reads until the server closes it or
    /// `timeoutMs` passes with nothing new; `halfClose` shuts the writing side after sending.
    static func exchange(_ path: String, _ bytes: [UInt8], halfClose: Bool = false, timeoutMs: Int32 = 10_000) -> Reply? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may close early (a request too large): read its answer
            sent += n
        }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeoutMs) == 1 else { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[..<n]
            if Reply(raw: received).isComplete { break }
        }
        return Reply(raw: received)
    }

    /// A well-formed GET of `target` that closes the connection after the answer.
    static func get(_ path: String, _ target: String, method: String = "GET") -> Reply? {
        exchange(path, Array("\(method) \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8))
    }
}
