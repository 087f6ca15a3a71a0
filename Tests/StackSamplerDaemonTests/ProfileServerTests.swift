import Foundation
import StackSampler
import Synchronization
import Testing
@testable import StackSamplerDaemon

/// A provider that takes no profile: it answers `.unavailable` at once, or, when held, waits
/// until released (to test one-at-a-time and stopping with a request open).
final class FakeProvider: ProfileProvider {
    let held = Atomic<Bool>(false)
    let entered = Atomic<Int>(0)
    let calls = Mutex<[(Int, SamplingMode)]>([])

    func profile(seconds: Int, mode: SamplingMode) -> Result<Profile, ProfileRequestError> {
        calls.withLock { $0.append((seconds, mode)) }
        entered.add(1, ordering: .sequentiallyConsistent)
        while held.load(ordering: .sequentiallyConsistent) { usleep(2_000) }
        return .failure(.unavailable("fake provider: no profile"))
    }

    func calls(seconds: Int) -> Result<Profile, ProfileRequestError> {
        .failure(.unavailable("fake provider: no calls"))
    }

    func status() -> String { "{\"fake\":true}" }
}

/// The server in this process, over real unix sockets: the default socket's directory and modes,
/// one profile at a time, stopping, slow clients, and malformed requests.
@Suite(.serialized) struct ProfileServerTests {
    static func scratch() throws -> String {
        let path = NSTemporaryDirectory() + "ss-http-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func mode(_ path: String) -> (mode: mode_t, uid: uid_t, type: mode_t)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & 0o7777, info.st_uid, info.st_mode & S_IFMT)
    }

    @Test("listens on unix:PATH and the default socket, modes 0600 in a 0700 directory; removed at stop")
    func socketsAndModes() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        let server = try ProfileServer(listen: [.unix(path: path)], provider: FakeProvider(), maxSeconds: 300)
        let defaultPath = ServiceSocket.defaultPath(pid: getpid(), uid: getuid())
        #expect(server.addresses == ["unix:\(path)", "unix:\(defaultPath)"])
        #expect(Self.mode(path)?.mode == 0o600)
        #expect(Self.mode(path)?.type == S_IFSOCK)
        #expect(Self.mode(defaultPath)?.mode == 0o600)
        #expect(Self.mode(ServiceSocket.directory(uid: getuid()))?.mode == 0o700)
        // No private directory left beside the socket.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["p.sock"])
        for socket in [path, defaultPath] {
            let reply = try #require(RawHTTP.get(socket, "/debug/stacksampler/status"))
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.header("Content-Type") == "application/json")
            #expect(reply.body == "{\"fake\":true}\n")
        }
        server.stop()
        server.stop()
        #expect(Self.mode(path) == nil)
        #expect(Self.mode(defaultPath) == nil)
    }

    @Test("a stale socket file is replaced; a live one, a plain file, a bad directory are refused")
    func staleAndRefused() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        // A socket file nothing listens on (its process gone).
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        close(stale)
        #expect(Self.mode(path)?.type == S_IFSOCK)
        let server = try ProfileServer(listen: [.unix(path: path)], provider: FakeProvider(), maxSeconds: 300)
        #expect(RawHTTP.get(path, "/debug/pprof/")?.status == 200)
        // Now it is live: a second server must not take it over.
        #expect(throws: ProfileServerError.self) { try ProfileServer(listen: [.unix(path: path)], provider: FakeProvider(), maxSeconds: 300) }
        #expect(RawHTTP.get(path, "/debug/pprof/")?.status == 200)
        server.stop()

        let file = directory + "/file"
        _ = FileManager.default.createFile(atPath: file, contents: Array("keep".utf8).withUnsafeBytes { Data($0) })
        do {
            _ = try ProfileServer(listen: [.unix(path: file)], provider: FakeProvider(), maxSeconds: 300)
            Issue.record("a plain file was taken over")
        } catch {
            #expect(error.description.contains("not a socket"), "\(error)")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "keep")
    }

    @Test("the default socket's directory: refused unless a 0700 directory of this user")
    func defaultDirectoryRefused() throws {
        let socketDirectory = ServiceSocket.directory(uid: getuid())
        try SocketDirectory.prepare(socketDirectory, uid: getuid())
        chmod(socketDirectory, 0o755)
        defer { chmod(socketDirectory, 0o700) }
        do {
            _ = try ProfileServer(listen: [.defaultSocket], provider: FakeProvider(), maxSeconds: 300)
            Issue.record("a 0755 socket directory was used")
        } catch {
            #expect(error.description.contains("mode 755, not 0700"), "\(error)")
        }
        #expect(throws: ProfileServerError.self) { try SocketDirectory.prepare("/etc/passwd", uid: getuid()) }
        #expect(throws: ProfileServerError.self) { try SocketDirectory.prepare("/", uid: 12345) }
    }

    @Test("one profile at a time: 429 with Retry-After meanwhile, other requests answered; stop answers the open one 503")
    func oneAtATime() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        let provider = FakeProvider()
        provider.held.store(true, ordering: .sequentiallyConsistent)
        let server = try ProfileServer(listen: [.unix(path: path)], provider: provider, maxSeconds: 300)
        let first = Mutex<RawHTTP.Reply?>(nil)
        let done = Atomic<Bool>(false)
        let thread = Thread {
            first.withLock { $0 = RawHTTP.get(path, "/debug/pprof/profile?seconds=20") }
            done.store(true, ordering: .sequentiallyConsistent)
        }
        thread.start()
        while provider.entered.load(ordering: .sequentiallyConsistent) == 0 { usleep(2_000) }
        let second = try #require(RawHTTP.get(path, "/debug/stacksampler/flamegraph.svg?seconds=1"))
        #expect(second.status == 429, "\(second.text)")
        let retry = try #require(second.header("Retry-After").flatMap { Int($0) })
        #expect((1...20).contains(retry))
        #expect(RawHTTP.get(path, "/debug/stacksampler/status")?.status == 200)
        #expect(RawHTTP.get(path, "/nope")?.status == 404)
        #expect(provider.calls.withLock { $0.count } == 1)
        server.stop()
        while !done.load(ordering: .sequentiallyConsistent) { usleep(2_000) }
        let answer = try #require(first.withLock { $0 })
        #expect(answer.status == 503, "\(answer.text)")
        #expect(answer.body.contains("stopping"))
        provider.held.store(false, ordering: .sequentiallyConsistent)
    }

    @Test("the provider's answer goes back; the slot is free again for the next request")
    func sequential() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        let provider = FakeProvider()
        let server = try ProfileServer(listen: [.unix(path: path)], provider: provider, maxSeconds: 5)
        defer { server.stop() }
        for target in ["/debug/pprof/profile?seconds=2", "/debug/stacksampler/wall?seconds=3", "/debug/stacksampler/folded?mode=wall"] {
            let reply = try #require(RawHTTP.get(path, target))
            #expect(reply.status == 503, "\(reply.text)")
            #expect(reply.body == "fake provider: no profile\n")
        }
        #expect(provider.calls.withLock { $0.map(\.0) } == [2, 3, 5])
        #expect(provider.calls.withLock { $0.map(\.1) } == [.cpu, .wall, .wall])
        let tooLong = try #require(RawHTTP.get(path, "/debug/pprof/profile?seconds=6"))
        #expect(tooLong.status == 400)
        #expect(tooLong.body == "bad seconds: 6 must be a whole number of seconds from 1 to 5 (the server's bound, STACKSAMPLER_MAX_REQUEST_SECONDS, is 5)\n")
        #expect(tooLong.header("X-Go-Pprof") == "1")
        let post = try #require(RawHTTP.get(path, "/debug/pprof/profile", method: "POST"))
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD")
        let head = try #require(RawHTTP.get(path, "/debug/pprof/", method: "HEAD"))
        #expect(head.status == 200 && head.body.isEmpty)
    }

    @Test("a client that sends half a request and waits is closed after the connection timeout")
    func slowClient() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        var limits = HTTPServerLimits()
        limits.connectionTimeoutSeconds = 1
        let server = try ProfileServer(listen: [.unix(path: path)], provider: FakeProvider(), maxSeconds: 5, limits: limits)
        defer { server.stop() }
        let started = Date()
        let reply = RawHTTP.exchange(path, Array("GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\n".utf8), timeoutMs: 20_000)
        let waited = Date().timeIntervalSince(started)
        #expect(reply?.raw.isEmpty ?? true)
        #expect(waited < 15, "closed after \(waited) s")
        #expect(RawHTTP.get(path, "/debug/pprof/")?.status == 200)
    }

    @Test("fuzz: thousands of malformed requests get an HTTP error or a close, never a crash; a good request is answered after")
    func fuzz() throws {
        let directory = try Self.scratch()
        let path = directory + "/p.sock"
        var limits = HTTPServerLimits()
        limits.connectionTimeoutSeconds = 1
        limits.connectionLimit = 32
        let server = try ProfileServer(listen: [.unix(path: path)], provider: FakeProvider(), maxSeconds: 5, limits: limits)
        defer { server.stop() }
        // 16 clients at once, each its own share of the rounds: requests that can never complete
        // wait out the 1 s connection timeout side by side. The requests are the same every run.
        let rounds = 480, clients = 16
        let statuses = Mutex<[Int: Int]>([:])
        let finished = Atomic<Int>(0)
        for client in 0..<clients {
            Thread {
                defer { finished.add(1, ordering: .sequentiallyConsistent) }
                for round in stride(from: client, to: rounds, by: clients) {
                var generator = SeededGenerator(seed: 0x5eed_1234 &+ UInt64(round))
                let request = MalformedRequests.make(round, &generator)
                let reply = RawHTTP.exchange(path, request, halfClose: round % 2 == 0, timeoutMs: 5_000)
                statuses.withLock { $0[reply?.status ?? 0, default: 0] += 1 }
                }
            }.start()
        }
        while finished.load(ordering: .sequentiallyConsistent) < clients { usleep(10_000) }
        let counts = statuses.withLock { $0 }
        print("fuzz statuses: \(counts.sorted { $0.key < $1.key })")
        #expect(counts.keys.allSatisfy { $0 == 0 || (200...599).contains($0) })
        #expect(counts.filter { (400...499).contains($0.key) || $0.key == 505 }.values.reduce(0, +) > rounds / 4)
        let good = try #require(RawHTTP.get(path, "/debug/stacksampler/status"))
        #expect(good.status == 200)
        #expect(RawHTTP.get(path, "/debug/pprof/profile?seconds=1")?.status == 503)
    }
}

/// xorshift64*: the same requests on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
}

/// Malformed and hostile requests, one kind per round.
enum MalformedRequests {
    static let paths = ["/debug/pprof/profile", "/debug/stacksampler/profile", "/debug/stacksampler/flamegraph.svg",
                        "/debug/stacksampler/folded", "/debug/stacksampler/wall", "/debug/stacksampler/status", "/debug/pprof/", "/x"]
    static let seconds = ["-1", "0", "abc", "99999999999999999999999999", "5%00", "%00", "1e3", "%2B5", "0x10", "5.5", "%", "%zz",
                          "%4", "18446744073709551616", "-9223372036854775808", "6", "", "%E2%80%8B", "%FF%FE"]

    static func make(_ round: Int, _ random: inout SeededGenerator) -> [UInt8] {
        func pick<T>(_ list: [T]) -> T { list[Int(random.next() % UInt64(list.count))] }
        let path = pick(paths)
        switch round % 12 {
        case 0:  // random bytes
            return (0..<Int(1 + random.next() % 2000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        case 1:  // a truncated request line
            let line = Array("GET \(path)?seconds=\(pick(seconds)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
            return Array(line.prefix(Int(random.next() % UInt64(line.count))))
        case 2:  // bad and absurd seconds, repeated parameters
            var query = "seconds=\(pick(seconds))"
            if random.next() % 2 == 0 { query += "&seconds=\(pick(seconds))&mode=\(pick(["cpu", "wall", "gpu", "%00", ""]))" }
            if random.next() % 2 == 0 { query += "&format=\(pick(["pprof", "svg", "png", "%", "folded&format=svg"]))" }
            return Array("GET \(path)?\(query) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        case 3:  // huge headers
            let size = [8_000, 20_000, 70_000, 300_000][Int(random.next() % 4)]
            return Array("GET \(path) HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: size))\r\n\r\n".utf8)
        case 4:  // a huge request line
            return Array("GET \(path)?\(String(repeating: "seconds=1&", count: Int(100 + random.next() % 5000))) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        case 5:  // NUL bytes in the request line and headers
            var bytes = Array("GET \(path)?seconds=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            for _ in 0..<Int(1 + random.next() % 4) { bytes[Int(random.next() % UInt64(bytes.count))] = 0 }
            return bytes
        case 6:  // odd methods and versions
            let method = pick(["POST", "PUT", "G\u{0}T", "get", String(repeating: "M", count: 5000), "", "CONNECT", "PRI"])
            let version = pick(["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "", "FOO"])
            return Array("\(method) \(path) \(version)\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        case 7:  // bodies on a GET: lengths absurd, negative, chunked garbage
            let header = pick(["Content-Length: -1", "Content-Length: 99999999999999999999", "Content-Length: 5",
                               "Transfer-Encoding: chunked", "Content-Length: 1\r\nContent-Length: 2"])
            return Array("GET \(path)?seconds=1 HTTP/1.1\r\nHost: x\r\n\(header)\r\n\r\nzzzzz\r\n".utf8)
        case 8:  // broken header lines
            let line = pick(["NoColon", ": empty name", " folded: line", "X: \u{7f}\u{1}", "Host: a\r\nHost: b", "\r\n\r\n"])
            return Array("GET \(path) HTTP/1.1\r\n\(line)\r\n\r\n".utf8)
        case 9:  // percent-encoding in the path
            let mangled = path.replacingOccurrences(of: "/", with: pick(["%2F", "%", "%2", "/%00/", "//", "/../"]))
            return Array("GET \(mangled)?seconds=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        case 10:  // HTTP/0.9 and bare lines
            return Array(pick(["GET /\r\n", "GET\r\n\r\n", "\r\n\r\n\r\n", "GET /debug/pprof/profile?seconds=1\r\n\r\n", " "]).utf8)
        default:  // pipelined requests
            let one = "GET \(path)?seconds=\(pick(seconds)) HTTP/1.1\r\nHost: x\r\n\r\n"
            return Array((one + one + "GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8)
        }
    }
}
