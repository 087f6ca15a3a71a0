import Glibc
import StackSampler
import Testing
@testable import StackSamplerDaemon

/// The endpoints' decisions, without sockets: status codes, parameters, headers.
@Suite struct RoutesTests {
    func route(_ path: String, _ arguments: [(String, String?)] = [], method: String = "GET", body: Bool = false,
               max: Int = 300) -> Route {
        Routes.route(method: method, path: path, arguments: arguments.map { (name: $0.0, value: $0.1) }, hasBody: body, maxSeconds: max)
    }

    func response(_ route: Route) -> HTTPResponse? {
        if case .respond(let response) = route { return response }
        return nil
    }

    @Test("Go's CPU endpoint: 30 s by default, cpu, pprof, downloaded as \"profile\"")
    func goProfile() {
        #expect(route("/debug/pprof/profile") == .profile(ProfileQuery(seconds: 30, mode: .cpu, format: .pprof, attachmentName: "profile")))
        #expect(route("/debug/pprof/profile", [("seconds", "5")]) == .profile(ProfileQuery(seconds: 5, mode: .cpu, format: .pprof, attachmentName: "profile")))
        #expect(route("/debug/pprof/profile", [("seconds", "")]) == .profile(ProfileQuery(seconds: 30, mode: .cpu, format: .pprof, attachmentName: "profile")))
        // Unknown parameters are ignored, as Go does; mode is not this endpoint's.
        #expect(route("/debug/pprof/profile", [("seconds", "2"), ("debug", "1"), ("mode", "wall")])
                == .profile(ProfileQuery(seconds: 2, mode: .cpu, format: .pprof, attachmentName: "profile")))
        #expect(route("/debug/pprof/profile", max: 10) == .profile(ProfileQuery(seconds: 10, mode: .cpu, format: .pprof, attachmentName: "profile")))
        #expect(route("/debug/pprof/profile", method: "HEAD") == .profile(ProfileQuery(seconds: 30, mode: .cpu, format: .pprof, attachmentName: "profile")))
    }

    @Test("the other profile endpoints")
    func endpoints() {
        #expect(route("/debug/stacksampler/wall", [("seconds", "3")]) == .profile(ProfileQuery(seconds: 3, mode: .wall, format: .pprof, attachmentName: "wall")))
        #expect(route("/debug/stacksampler/flamegraph.svg", [("seconds", "1"), ("mode", "wall")])
                == .profile(ProfileQuery(seconds: 1, mode: .wall, format: .svg, attachmentName: nil)))
        #expect(route("/debug/stacksampler/folded", [("seconds", "1")]) == .profile(ProfileQuery(seconds: 1, mode: .cpu, format: .folded, attachmentName: nil)))
        #expect(route("/debug/stacksampler/profile", [("seconds", "4"), ("mode", "wall"), ("format", "speedscope")])
                == .profile(ProfileQuery(seconds: 4, mode: .wall, format: .speedscope, attachmentName: nil)))
        #expect(route("/debug/stacksampler/profile") == .profile(ProfileQuery(seconds: 30, mode: .cpu, format: .pprof, attachmentName: "profile.pb.gz")))
        #expect(route("/debug/stacksampler/status") == .status)
        for index in ["/debug/pprof/", "/debug/pprof", "/debug/stacksampler/"] {
            let page = response(route(index))
            #expect(page?.status == 200)
            #expect(page?.header("Content-Type") == "text/html; charset=utf-8")
            let text = String(decoding: page?.body ?? [], as: UTF8.self)
            #expect(text.contains("/debug/stacksampler/flamegraph.svg"))
        }
    }

    @Test("bad seconds: 400 naming the parameter and the range",
          arguments: ["0", "-1", "abc", "301", "99999999999999999999999", "5\u{0}", "1e3", " 5", "+5", "0x10", "5.5", "٣"])
    func badSeconds(value: String) throws {
        let answer = try #require(response(route("/debug/pprof/profile", [("seconds", value)])))
        #expect(answer.status == 400)
        let text = String(decoding: answer.body, as: UTF8.self)
        #expect(text.hasPrefix("bad seconds: "), "\(text)")
        #expect(text.contains("from 1 to 300"), "\(text)")
        #expect(!text.contains("\u{0}"))
        #expect(answer.header("Content-Type") == "text/plain; charset=utf-8")
        #expect(answer.header("X-Go-Pprof") == "1")
        #expect(answer.header("Content-Disposition") == nil)
    }

    @Test("other bad parameters, repeated ones, a body")
    func badParameters() throws {
        let cases: [(Route, String)] = [
            (route("/debug/stacksampler/profile", [("mode", "gpu")]), "bad mode: 'gpu' must be one of cpu, wall"),
            (route("/debug/stacksampler/profile", [("format", "png")]), "bad format: 'png' must be one of folded, svg, pprof, speedscope"),
            (route("/debug/pprof/profile", [("seconds", "1"), ("seconds", "2")]), "bad seconds: given 2 times"),
            (route("/debug/stacksampler/folded", [("seconds", "11")], max: 10), "from 1 to 10"),
            (route("/debug/pprof/profile", body: true), "no request body"),
        ]
        for (decision, text) in cases {
            let answer = try #require(response(decision))
            #expect(answer.status == 400)
            #expect(String(decoding: answer.body, as: UTF8.self).contains(text), "\(String(decoding: answer.body, as: UTF8.self))")
        }
    }

    @Test("404 for an unknown path, 405 for other methods (known paths)")
    func pathsAndMethods() throws {
        for path in ["/", "/debug/pprof/heap", "/debug/pprof/profile/", "/DEBUG/PPROF/PROFILE", "/debug/stacksampler/x", ""] {
            #expect(response(route(path))?.status == 404, "\(path)")
        }
        #expect(response(route("/nope", method: "POST"))?.status == 404)
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "get", "BREW"] {
            let answer = try #require(response(route("/debug/pprof/profile", method: method)))
            #expect(answer.status == 405, "\(method)")
            #expect(answer.header("Allow") == "GET, HEAD")
        }
    }

    @Test("provider errors: 409 mode conflict, 429 busy with Retry-After, 503 unavailable")
    func providerErrors() {
        #expect(Routes.response(for: .modeConflict(running: .wall)).status == 409)
        let busy = Routes.response(for: .busy)
        #expect(busy.status == 429)
        #expect(busy.header("Retry-After") == "1")
        #expect(Routes.busy(retryAfter: 17).header("Retry-After") == "17")
        let unavailable = Routes.response(for: .unavailable("no profiler here"))
        #expect(unavailable.status == 503)
        #expect(String(decoding: unavailable.body, as: UTF8.self) == "no profiler here\n")
        let status = Routes.statusResponse("{\"a\":1}")
        #expect(status.status == 200 && status.header("Content-Type") == "application/json")
    }
}

/// Giving the listen addresses up to the service a wrapper started.
@Suite struct ListenReleaseTests {
    func route(_ arguments: [(String, String?)], method: String = "POST", body: Bool = false) -> Route {
        Routes.route(method: method, path: ListenRelease.path, arguments: arguments.map { (name: $0.0, value: $0.1) }, hasBody: body,
                     maxSeconds: 300)
    }

    @Test("POST with the requester's pid; 405 for GET, 400 for a missing or bad pid or a body")
    func route() {
        #expect(route([("pid", "4242")]) == .releaseListen(requester: 4242))
        guard case .respond(let get) = route([("pid", "4242")], method: "GET") else { Issue.record("GET was routed"); return }
        #expect(get.status == 405 && get.headers.contains { $0.name == "Allow" && $0.value == "POST" })
        for arguments in [[], [("pid", "")], [("pid", "1")], [("pid", "x")], [("pid", "-3")]] as [[(String, String?)]] {
            guard case .respond(let bad) = route(arguments) else { Issue.record("\(arguments) was routed"); continue }
            #expect(bad.status == 400, "\(arguments)")
        }
        guard case .respond(let withBody) = route([("pid", "4242")], body: true) else { Issue.record("a body was routed"); return }
        #expect(withBody.status == 400)
    }

    @Test("only a descendant gets the addresses, and only from a holder that only started it; a holder with none says so")
    func answer() {
        var released = false
        // This process's parent is not its descendant.
        let stranger = ListenRelease.answer(getppid(), onlyStarts: { true }) { released = true; return ["127.0.0.1:1"] }
        #expect(stranger.status == 403 && !released)
        // A child of this process is.
        var child: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("sleep"), strdup("30"), nil]
        defer { arguments.forEach { free($0) } }
        guard posix_spawn(&child, "/bin/sleep", nil, nil, arguments, nil) == 0 else { Issue.record("cannot start a child"); return }
        defer { kill(child, SIGKILL); waitpid(child, nil, 0) }
        let busy = ListenRelease.answer(child, onlyStarts: { false }) { released = true; return ["127.0.0.1:1"] }
        #expect(busy.status == 409 && !released, "a service that runs a helper keeps its address")
        let given = ListenRelease.answer(child, onlyStarts: { true }) { released = true; return ["127.0.0.1:1"] }
        #expect(given.status == 200 && released)
        #expect(String(decoding: given.body, as: UTF8.self).contains("127.0.0.1:1"))
        #expect(ListenRelease.answer(child, onlyStarts: { true }) { nil }.status == 409)
    }

    @Test("a process's ancestors: its parent first, never itself")
    func ancestry() {
        let chain = ProcessAncestry.ancestors(of: getpid())
        #expect(chain.first == getppid())
        #expect(!chain.contains(getpid()))
        #expect(ProcessAncestry.isDescendant(getpid(), of: getppid()))
        #expect(!ProcessAncestry.isDescendant(getppid(), of: getpid()))
    }
}
