import CEngineHeader
import Glibc
import HTTPServerLibrary
import StackSampler
import Synchronization

/// The daemon's HTTP pull endpoints (see `Routes`), served from inside the profiled process on
/// the addresses asked for and always on the default per-process socket
/// (`ServiceSocket.defaultPath`). libmicrohttpd is loaded (privately) only when a server is made.
/// One profile is taken at a time; other requests are answered meanwhile.
package final class ProfileServer: Sendable {
    /// What the server listens on, as written in the setting (`unix:PATH` for the default socket).
    package let addresses: [String]
    private let core: ServerCore
    private let binding: HTTPServerBinding
    private let sockets: [ListeningSocket]
    /// The process that made the server: a forked child inherits the object but none of its threads.
    private let ownerPID: pid_t
    private let stopped = Atomic<Bool>(false)

    /// Listens on `listen` and (unless `defaultSocket` is false) on the default per-process socket,
    /// and serves `provider`'s profiles of at most `maxSeconds`. Throws, saying why, in
    /// secure-execution mode (setuid and the like: the environment that asked for a listener belongs
    /// to a less privileged user) or if a listener asked for cannot be opened. A default socket that
    /// cannot be opened (its directory not a private one of this user) is left out with one line on
    /// standard error; it throws only when it is the only listener.
    /// `release`, when given, answers the listen-release endpoint (`Routes`); a server without it
    /// answers that endpoint 404, so that only the default socket's can give addresses away.
    package init(listen: [ListenAddress], defaultSocket: Bool = true, provider: any ProfileProvider, maxSeconds: Int,
                limits: HTTPServerLimits = HTTPServerLimits(),
                release: (@Sendable (pid_t) -> HTTPResponse)? = nil) throws(ProfileServerError) {
        guard ss_secure_execution() == 0 else {
            throw ProfileServerError("secure-execution mode (setuid, setgid or file capabilities): not listening, since the environment that asks for it belongs to a less privileged user")
        }
        do {
            try SessionSettings.maxRequestSeconds.check(maxSeconds, shown: "the longest request, \(maxSeconds) seconds,")
        } catch {
            throw ProfileServerError(error.description)
        }
        let uid = getuid()
        let defaultPath = ServiceSocket.defaultPath(pid: getpid(), uid: uid)
        var opened: [ListeningSocket] = []
        do throws(ProfileServerError) {
            for address in listen where address != .defaultSocket && address != .unix(path: defaultPath) {
                opened.append(try ListeningSocket.open(address, defaultPath: defaultPath, uid: uid))
            }
            if defaultSocket {
                do throws(ProfileServerError) {
                    try SocketDirectory.prepare(ServiceSocket.directory(uid: uid), uid: uid)
                    SocketDirectory.removeStale(ServiceSocket.directory(uid: uid), uid: uid)
                    opened.append(try ListeningSocket.open(.defaultSocket, defaultPath: defaultPath, uid: uid))
                } catch {
                    guard !opened.isEmpty else { throw error }
                    StandardError.report(error.description)
                }
            }
            guard !opened.isEmpty else { throw ProfileServerError("no address to listen on") }
        } catch {
            for socket in opened {
                close(socket.descriptor)
                socket.removeFile()
            }
            throw error
        }
        let core = ServerCore(provider: provider, maxSeconds: maxSeconds, release: release)
        let served = opened.map { $0.address == .defaultSocket ? "unix:\(defaultPath)" : $0.address.description }
        let binding: HTTPServerBinding
        do throws(ProfileServerError) {
            binding = try HTTPServerBinding(descriptors: opened.map(\.descriptor), limits: limits) { core.handle($0) }
            try binding.start {
                StandardError.report("the program closed or reused the descriptors of the profiling server (listening on \(served.joined(separator: ", "))); the profile endpoints are no longer served")
            }
        } catch {
            opened.forEach { $0.removeFile() }
            throw error
        }
        self.core = core
        self.binding = binding
        sockets = opened
        addresses = served
        ownerPID = getpid()
    }

    /// Stops listening: a profile being taken is answered 503, the sockets are closed and the
    /// socket files removed. Idempotent; does nothing in a forked child (whose parent still serves).
    package func stop() {
        guard getpid() == ownerPID, !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        binding.stop()
        sockets.forEach { $0.removeFile() }
    }

    deinit {
        stop()
    }

    /// In a forked child: whether a thread of the parent's was running the server's code at the
    /// fork (a request being handled or a profile being taken), so that a lock it held may be held
    /// in the child for ever; a daemon started there could wait on it.
    package static var wasBusyAtFork: Bool { ss_http_work_under_way() != 0 }
}

/// What the loop's thread does with each request: routes it, answers at once, or takes the
/// profile on a worker thread of its own (unsampled), one at a time.
private final class ServerCore: Sendable {
    let provider: any ProfileProvider
    let maxSeconds: Int
    /// While a profile is being taken: when it should end (CLOCK_MONOTONIC ns), for Retry-After.
    let profiling = Mutex<UInt64?>(nil)

    /// Answers the listen-release endpoint; nil where this server does not serve it.
    let release: (@Sendable (pid_t) -> HTTPResponse)?

    init(provider: any ProfileProvider, maxSeconds: Int, release: (@Sendable (pid_t) -> HTTPResponse)?) {
        self.provider = provider
        self.maxSeconds = maxSeconds
        self.release = release
    }

    func handle(_ request: HTTPRequest) {
        let route = Routes.route(method: request.method, path: request.path, arguments: request.arguments,
                                 hasBody: request.hasBody, maxSeconds: maxSeconds, accept: request.accept)
        switch route {
        case .respond(let response): request.respond(response)
        case .releaseListen(let requester):
            request.respond(release?(requester) ?? .error(404, "404 page not found: the listen addresses are given up only on the default socket"))
        case .status: request.respond(Routes.statusResponse(provider.status()))
        case .stalls:
            let (reports, total) = RecentStalls.reports
            request.respond(Routes.stallsResponse(reports, total: total))
        case .profile(let query):
            startProfile(seconds: query.seconds, for: request) { [provider] in
                switch provider.profile(seconds: query.seconds, mode: query.mode) {
                case .success(let profile): Routes.response(for: profile, query)
                case .failure(let error): Routes.response(for: error)
                }
            }
        case .calls(let query):
            startProfile(seconds: query.seconds, for: request) { [provider] in
                switch provider.calls(seconds: query.seconds) {
                case .success(let profile): Routes.response(forCalls: profile, query)
                case .failure(let error): Routes.response(for: error)
                }
            }
        }
    }

    /// Takes the profile slot and hands the request to a worker, which answers with what
    /// `answer` makes of the next `seconds`; or answers 429 at once.
    private func startProfile(seconds: Int, for request: HTTPRequest, answer: @escaping @Sendable () -> HTTPResponse) {
        let now = ss_now_ns()
        let busyUntil: UInt64? = profiling.withLock { slot in
            if let end = slot { return end }
            slot = now &+ UInt64(seconds) &* 1_000_000_000
            return nil
        }
        if let busyUntil {
            let remaining = busyUntil > now ? Int((busyUntil - now + 999_999_999) / 1_000_000_000) : 1
            request.respond(Routes.busy(retryAfter: remaining))
            return
        }
        guard request.deferAnswer() else {
            profiling.withLock { $0 = nil }
            request.respond(.error(503, "the profiling server is stopping"))
            return
        }
        let work = Work { [self] in
            defer { ss_http_work_end() }
            let response = answer()
            // Free the slot before answering, so a client's next request is not refused.
            profiling.withLock { $0 = nil }
            request.respond(response)
            // Naming read whole symbol tables on this thread: give their pages back, so that a
            // request leaves the service's resident size where it was.
            ss_release_free_memory()
        }
        // Under way from now (still in the handler's call) until the worker has answered.
        ss_http_work_begin()
        do {
            pthread_detach(try ProfilerThreads.spawn(named: "ss-http-worker") { work.body() })
        } catch {
            ss_http_work_end()
            profiling.withLock { $0 = nil }
            request.respond(.error(503, "\(error)"))
        }
    }
}

/// A closure for a worker thread.
private final class Work: Sendable {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}
