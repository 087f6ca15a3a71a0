import StackSampler
import Testing
@testable import StackSamplerDaemon

/// The calls endpoints' decisions: the table's format by `format` or `Accept`, the trace formats, OTLP refused by name.
@Suite struct CallsRoutesTests {
    func route(_ path: String, _ arguments: [(String, String?)] = [], accept: String? = nil) -> Route {
        Routes.route(method: "GET", path: path, arguments: arguments.map { (name: $0.0, value: $0.1) }, hasBody: false, maxSeconds: 300, accept: accept)
    }

    @Test("calls: text by default, JSON by format or Accept, a function pattern passed on; invocations in a trace format; stalls")
    func callsRoutes() {
        #expect(route("/debug/stacksampler/calls") == .calls(CallsQuery(seconds: 30, function: nil, answer: .table(json: false))))
        #expect(route("/debug/stacksampler/calls", [("seconds", "5"), ("format", "json"), ("function", "parse_*")])
                == .calls(CallsQuery(seconds: 5, function: "parse_*", answer: .table(json: true))))
        #expect(route("/debug/stacksampler/calls", accept: "text/html, application/json;q=0.9")
                == .calls(CallsQuery(seconds: 30, function: nil, answer: .table(json: true))))
        #expect(route("/debug/stacksampler/calls", [("format", "text")], accept: "application/json")
                == .calls(CallsQuery(seconds: 30, function: nil, answer: .table(json: false))))
        #expect(route("/debug/stacksampler/invocations", [("seconds", "2"), ("format", "speedscope")])
                == .calls(CallsQuery(seconds: 2, function: nil, answer: .trace(.speedscope))))
        #expect(route("/debug/stacksampler/stalls") == .stalls)
    }

    @Test("otlp and other unknown formats are a 400 that names the formats served")
    func refusedFormats() {
        for (path, format) in [("/debug/stacksampler/invocations", "otlp"), ("/debug/stacksampler/invocations", "pprof"), ("/debug/stacksampler/calls", "xml")] {
            guard case .respond(let response) = route(path, [("format", format)]) else {
                Issue.record("\(path) format=\(format) was not refused")
                continue
            }
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == 400 && (text.contains("chrome") || text.contains("json")), "\(text)")
        }
    }
}
