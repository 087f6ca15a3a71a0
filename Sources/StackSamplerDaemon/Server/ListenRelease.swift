import Glibc

/// Both sides of giving listen addresses up to a descendant (see `ListenHandOver.claimed`): the
/// request a new program makes of its ancestors, and the check a holder makes before it gives
/// them up. Only a descendant may have them: the program a wrapper started, not a stranger.
enum ListenRelease {
    /// The path of the request, with the requester's pid appended as `?pid=N`.
    static let path = "/debug/stacksampler/listen/release"

    /// Asks the ancestors of `pid`, nearest first, each on its default socket, to give up their
    /// listen addresses to it: the pid of the one that did, or nil if none did.
    static func ask(for pid: pid_t) -> pid_t? {
        let uid = getuid()
        for ancestor in ProcessAncestry.ancestors(of: pid) {
            let socket = ServiceSocket.defaultPath(pid: ancestor, uid: uid)
            guard access(socket, F_OK) == 0 else { continue }
            let request = HTTPClientRequest(method: .post, url: "http://localhost\(path)?pid=\(pid)", unixSocketPath: socket,
                                            connectTimeoutMilliseconds: 1000, totalTimeoutMilliseconds: 5000)
            if case .success(let response) = HTTPClient().send(request), response.status == 200 { return ancestor }
        }
        return nil
    }

    /// The answer of a holder (this process) asked by `requester`: `release` (which stops serving
    /// the addresses and says which they were, or nil if it held none) is called only for a
    /// descendant of this process.
    static func answer(_ requester: pid_t, release: () -> [String]?) -> HTTPResponse {
        guard ProcessAncestry.isDescendant(requester, of: getpid()) else {
            return .error(403, "process \(requester) is not a descendant of process \(getpid()): the listen addresses go only to a program it started")
        }
        guard let released = release(), !released.isEmpty else {
            return .error(409, "process \(getpid()) holds no listen address to give up")
        }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                            body: Array("released \(released.joined(separator: ", ")) to process \(requester)\n".utf8))
    }
}
