import Foundation
import StackSampler
import StackSamplerDaemon

/// Where a running process's daemon answers, found from the process itself: the address in its
/// `STACKSAMPLER_LISTEN` (`/proc/PID/environ`), else its default per-process socket
/// (`ServiceSocket.defaultPath`, owned by the process's user). Requests go over HTTP
/// (`HTTPClient`), by TCP or by the unix socket.
struct DaemonConnection {
    /// The process.
    let pid: Int32
    /// `http://HOST:PORT` for TCP; `http://localhost` with `unixSocketPath`.
    let baseURL: String
    /// The unix socket, or nil for TCP.
    let unixSocketPath: String?

    /// What the user reads when the process cannot be reached.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How to start a process so that this command can reach it.
    static let howToStart = "start it with the preload library and a listen address, e.g. LD_PRELOAD=/path/to/libStackSamplerPreload.so STACKSAMPLER_LISTEN=unix PROGRAM"

    /// The daemon of process `pid`; an error says why it cannot be reached, and tells apart a
    /// process without the preload library (not in its memory map: its environment may have been
    /// rewritten, as nginx's process titles do) from one that has it but runs no daemon, and a
    /// listen address served by another process (a forked child's parent holds it) from its own.
    /// The process's own default socket comes first.
    static func find(pid: Int32) throws -> DaemonConnection {
        let directory = "/proc/\(pid)"
        var status = stat()
        guard pid > 0, stat(directory, &status) == 0 else { throw Failure(description: "no process \(pid)") }
        // Read to its end (Foundation's whole-file reads trust the size /proc reports: 0).
        let mapsDescriptor = open(directory + "/maps", O_RDONLY | O_CLOEXEC)
        guard mapsDescriptor >= 0 else {
            if errno == EACCES {
                throw Failure(description: "permission denied reading /proc/\(pid)/maps: process \(pid) belongs to another user (uid \(status.st_uid)); run as that user or as root")
            }
            throw Failure(description: "cannot read /proc/\(pid)/maps (has process \(pid) exited?): \(String(cString: strerror(errno)))")
        }
        let maps = String(decoding: FileHandle(fileDescriptor: mapsDescriptor, closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        guard maps.contains("/libStackSamplerPreload.so") else {
            throw Failure(description: "process \(pid) was not started with the StackSampler preload library (libStackSamplerPreload.so is not in /proc/\(pid)/maps); \(howToStart)")
        }
        let socket = ServiceSocket.defaultPath(pid: pid, uid: status.st_uid)
        if access(socket, F_OK) == 0 { return try reachable(pid: pid, socket: socket) }
        let environment = (try? readEnvironment(of: pid)) ?? [:]
        if let listen = SettingEnvironment(environment).text(SessionSettings.listen.variable), listen != "unix" {
            let connection = listen.hasPrefix("unix:") ? try reachable(pid: pid, socket: String(listen.dropFirst(5)))
                : DaemonConnection(pid: pid, baseURL: "http://\(connectableHost(listen))", unixSocketPath: nil)
            try connection.checkServedByTheProcess(listen: listen, socket: socket)
            return connection
        }
        throw Failure(description: "process \(pid) has the StackSampler preload library loaded but no daemon socket at \(socket): it runs no daemon (it was started without STACKSAMPLER_LISTEN or another daemon setting, or its daemon could not start: see its standard error)")
    }

    /// Throws unless the daemon at the listen address is process `pid`'s (its status names its pid).
    private func checkServedByTheProcess(listen: String, socket: String) throws {
        let body: [UInt8]
        do {
            body = try get("/debug/stacksampler/status", seconds: 0)
        } catch let failure as Failure {
            throw Failure(description: "process \(pid) has no daemon socket at \(socket), and its listen address \(listen) does not answer as its daemon: \(failure.description)")
        }
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        guard let server = (object?["pid"] as? NSNumber)?.int32Value, server != pid else { return }
        throw Failure(description: "the listen address \(listen) is served by process \(server), not by process \(pid) (a forked process's parent keeps it while it lives); process \(pid) has no daemon socket at \(socket) (see its standard error)")
    }

    /// A connection by `socket`, after checking that it is there and may be opened.
    private static func reachable(pid: Int32, socket: String) throws -> DaemonConnection {
        if access(socket, F_OK) != 0 {
            throw Failure(description: "process \(pid) has no daemon socket at \(socket) (\(String(cString: strerror(errno)))); \(howToStart)")
        }
        if access(socket, R_OK | W_OK) != 0 {
            throw Failure(description: "permission denied on \(socket): the socket belongs to the process's user; run as that user or as root")
        }
        return DaemonConnection(pid: pid, baseURL: "http://localhost", unixSocketPath: socket)
    }

    /// `HOST:PORT` with a wildcard host replaced by loopback (0.0.0.0 listens everywhere, but is no address to connect to).
    static func connectableHost(_ listen: String) -> String {
        if listen.hasPrefix("0.0.0.0:") { return "127.0.0.1" + listen.dropFirst(7) }
        if listen.hasPrefix("[::]:") { return "[::1]" + listen.dropFirst(4) }
        if listen.hasPrefix(":") { return "127.0.0.1" + listen }
        return listen
    }

    /// The environment process `pid` started with.
    static func readEnvironment(of pid: Int32) throws -> [String: String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "=") else { continue }
            environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return environment
    }

    /// `GET path` (with its query) from the daemon, waiting up to `seconds` more than the usual
    /// bounds; the body of a 200, else an error with the daemon's own text.
    func get(_ pathAndQuery: String, seconds: Int) throws -> [UInt8] {
        let request = HTTPClientRequest(url: baseURL + pathAndQuery, unixSocketPath: unixSocketPath, connectTimeoutMilliseconds: 5000,
                                  totalTimeoutMilliseconds: (seconds + 30) * 1000, maxResponseBytes: 512 << 20)
        switch HTTPClient().send(request) {
        case .failure(.libraryUnavailable(let reason)):
            throw Failure(description: reason)
        case .failure(.transferFailed(_, let reason)):
            if let socket = unixSocketPath {
                throw Failure(description: "process \(pid)'s daemon socket \(socket) does not answer (\(reason)): its daemon stopped, or the program closed the daemon's descriptors (see its standard error)")
            }
            throw Failure(description: "cannot reach process \(pid)'s daemon at \(baseURL): \(reason)")
        case .success(let response) where response.status == 200:
            return response.body
        case .success(let response):
            let text = response.text.isEmpty ? "(no explanation given)" : response.text
            throw Failure(description: "process \(pid)'s daemon answered \(response.status) \(Self.reason(response.status)): \(text)")
        }
    }

    /// The usual phrase of the statuses the daemon's contract uses.
    private static func reason(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 404: "Not Found"
        case 409: "Conflict"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: ""
        }
    }

    /// The path and query of a profile of the next `seconds`.
    static func profilePath(seconds: Int, mode: SamplingMode, format: OutputFormat) -> String {
        profilePath(seconds: seconds, mode: mode, formats: [format])
    }

    /// The path and query of a profile of the next `seconds` in each of `formats` (several: a `ProfileBundle`).
    static func profilePath(seconds: Int, mode: SamplingMode, formats: [OutputFormat]) -> String {
        "/debug/stacksampler/profile?seconds=\(seconds)&mode=\(mode.rawValue)&format=\(formats.map(\.rawValue).joined(separator: ","))"
    }
}
