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
