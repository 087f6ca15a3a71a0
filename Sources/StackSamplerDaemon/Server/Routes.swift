import Glibc
import StackSampler

/// A profile a request asks for, and how its answer is shaped.
package struct ProfileQuery: Sendable, Equatable {
    /// The span to profile, in seconds.
    package var seconds: Int
    package var mode: SamplingMode
    package var format: OutputFormat
    /// The file name offered for a download (pprof), if any.
    package var attachmentName: String?
    /// Further formats of the same profile (`format=pprof,folded`): the answer is a `ProfileBundle`.
    package var moreFormats: [OutputFormat] = []
}

/// The calls a request asks for (invocations on): the next `seconds` of them, and how the answer is shaped.
package struct CallsQuery: Sendable, Equatable {
    /// The answer's shape: the calls table (JSON or text), or the calls in a trace format.
    package enum Answer: Sendable, Equatable {
        /// The calls table, as JSON or as text.
        case table(json: Bool)
        /// The calls themselves, in a trace format.
        case trace(InvocationFormat)
    }

    /// The span, in seconds.
    package var seconds: Int
    /// Only functions whose name matches (`function=GLOB`: a glob with `*` and `?`, else a substring).
    package var function: String?
    /// How the answer is shaped.
    package var answer: Answer
}

/// What the server does with a request.
package enum Route: Sendable, Equatable {
    /// Answer this at once.
    case respond(HTTPResponse)
    /// Take this profile (seconds long), then answer with it.
    case profile(ProfileQuery)
    /// Take the calls of the next seconds, then answer with them.
    case calls(CallsQuery)
    /// Answer with the provider's status.
    case status
    /// Answer with the recent stall reports.
    case stalls
    /// Give up the listen addresses to process `requester`, a descendant that was started to
    /// serve them (the service a wrapper started); on the default socket only.
    case releaseListen(requester: pid_t)
}

/// The endpoints, as pure decisions from a request's method, path and query to a route; no
/// sockets. The paths and their behaviour are a contract (the CLI client, Go's pprof tool,
/// Parca and Grafana Alloy depend on them):
///
/// - `/debug/pprof/profile?seconds=N`: as Go's net/http/pprof: N seconds of CPU samples,
///   gzip-compressed profile.proto, `application/octet-stream`, `attachment; filename="profile"`.
/// - `/debug/stacksampler/wall?seconds=N`: the same in wall mode.
/// - `/debug/stacksampler/profile?seconds=N&mode=cpu|wall&format=pprof|folded|svg|speedscope`; several
///   formats separated by commas (`format=pprof,folded`) answer one profile in each, as a `ProfileBundle`.
/// - `/debug/stacksampler/flamegraph.svg?seconds=N&mode=…` and `/debug/stacksampler/folded?…`.
/// - `/debug/stacksampler/calls?seconds=N[&function=GLOB][&format=json|text]`: the calls table of
///   the next N seconds (invocations on): JSON when `format=json` or `Accept` names
///   `application/json`, else text.
/// - `/debug/stacksampler/invocations?seconds=N&format=chrome|speedscope|spans`: the calls of the
///   next N seconds in a trace format.
/// - `/debug/stacksampler/stalls`: the recent stall reports, text.
/// - `/debug/stacksampler/status`: the provider's JSON.
/// - `/debug/pprof/` (and `/debug/stacksampler/`): an index of these.
/// - `POST /debug/stacksampler/listen/release?pid=N`: the process gives up its listen addresses
///   to its descendant N (ListenClaim); served on the default per-process socket only.
///
/// Errors: 400 for a bad parameter (the text names it and what is accepted), 404 for an unknown
/// path, 405 for a method other than GET or HEAD. One difference from Go on purpose: Go takes a
/// `seconds` that is not a positive integer as 30; here it is a 400, since a mistyped value would
/// otherwise hold the one profile slot for 30 s. A missing or empty `seconds` is 30 s, as in Go
/// (less if the server's bound is lower).
package enum Routes {
    /// The default span, as Go's.
    package static let defaultSeconds = 30

    /// The route for a request. `arguments` are the query's, percent-decoded, in order (a nil
    /// value for a name without `=`); `hasBody` whether the request announced a body.
    package static func route(method: String, path: String, arguments: [(name: String, value: String?)], hasBody: Bool,
                             maxSeconds: Int, accept: String? = nil) -> Route {
        guard let endpoint = Endpoint(path: path) else {
            return .respond(.error(404, "404 page not found: no endpoint \(printable(path)); see /debug/pprof/ for the list"))
        }
        guard method == "GET" || method == "HEAD" || endpoint == .releaseListen else {
            return .respond(.error(405, "method \(printable(method)) not allowed; use GET", extraHeaders: [HTTPHeader("Allow", "GET, HEAD")]))
        }
        guard !hasBody else { return .respond(.error(400, "these endpoints take no request body")) }
        var query = Query(arguments)
        switch endpoint {
        case .index: return .respond(index)
        case .status: return .status
        case .goProfile:
            return profile(&query, maxSeconds: maxSeconds, mode: .cpu, format: .pprof, attachment: "profile")
        case .wall:
            return profile(&query, maxSeconds: maxSeconds, mode: .wall, format: .pprof, attachment: "wall")
        case .general:
            return profile(&query, maxSeconds: maxSeconds, mode: nil, format: nil, attachment: "profile.pb.gz")
        case .flameGraph:
            return profile(&query, maxSeconds: maxSeconds, mode: nil, format: .svg, attachment: nil)
        case .folded:
            return profile(&query, maxSeconds: maxSeconds, mode: nil, format: .folded, attachment: nil)
        case .calls:
            return calls(&query, maxSeconds: maxSeconds, accept: accept)
        case .invocations:
            return calls(&query, maxSeconds: maxSeconds, accept: nil, trace: true)
        case .stalls:
            return .stalls
        case .releaseListen:
            return releaseListen(method: method, arguments: query)
        }
    }

    /// The release of the listen addresses to the process named by `pid`, or the error.
    private static func releaseListen(method: String, arguments query: Query) -> Route {
        guard method == "POST" else {
            return .respond(.error(405, "method \(printable(method)) not allowed; use POST", extraHeaders: [HTTPHeader("Allow", "POST")]))
        }
        do throws(HTTPResponse) {
            let text = try query.value("pid") ?? ""
            guard let pid = pid_t(text), pid > 1 else { throw .error(400, "bad pid: \(printable(text)) must be the process id of the process to give the addresses to") }
            return .releaseListen(requester: pid)
        } catch {
            return .respond(error)
        }
    }

    /// The answer carrying the calls table of `profile`, or its calls in a trace format, as `query` asks.
    package static func response(forCalls profile: Profile, _ query: CallsQuery) -> HTTPResponse {
        let pattern = query.function.map(FunctionPattern.init)
        let (type, body): (String, [UInt8])
        switch query.answer {
        case .table(let json):
            // Filtered once built, so that a call's path still names its callers.
            var table = CallTable(profile)
            if let pattern {
                table.functions.removeAll { !pattern.matches($0.name) }
                table.running.removeAll { !pattern.matches($0.name) }
            }
            (type, body) = json ? ("application/json", Array(table.json.utf8)) : ("text/plain; charset=utf-8", Array(table.text().utf8))
        case .trace(let format):
            var profile = profile
            if let pattern {
                profile.invocations.removeAll { !pattern.matches($0.name) }
                profile.runningInvocations.removeAll { !pattern.matches($0.name) }
            }
            (type, body) = ("application/json", profile.renderedInvocations(as: format))
        }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", type), HTTPHeader("X-Content-Type-Options", "nosniff")], body: body)
    }

    /// The answer carrying the recent stall reports (`total` written since the process started), oldest first.
    package static func stallsResponse(_ reports: [String], total: Int) -> HTTPResponse {
        let head = "stacksampler: \(total) stall reports since the process started; the last \(reports.count), oldest first\n"
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("X-Content-Type-Options", "nosniff")],
                            body: Array((head + reports.joined()).utf8))
    }

    /// The answer carrying `profile` rendered as `query` asks.
    package static func response(for profile: Profile, _ query: ProfileQuery) -> HTTPResponse {
        if !query.moreFormats.isEmpty {
            return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", ProfileBundle.contentType), HTTPHeader("X-Content-Type-Options", "nosniff")],
                                body: ProfileBundle.encode(profile, formats: [query.format] + query.moreFormats))
        }
        var headers = [HTTPHeader("Content-Type", contentType(of: query.format)), HTTPHeader("X-Content-Type-Options", "nosniff")]
        if query.format == .pprof, let name = query.attachmentName {
            headers.append(HTTPHeader("Content-Disposition", "attachment; filename=\"\(name)\""))
        }
        return HTTPResponse(status: 200, headers: headers, body: profile.rendered(as: query.format))
    }

    /// The answer when the provider could not take the profile.
    package static func response(for error: ProfileRequestError) -> HTTPResponse {
        switch error {
        case .modeConflict: .error(409, error.description)
        case .busy: busy(retryAfter: 1)
        case .unavailable: .error(503, error.description)
        }
    }

    /// 429: another profile is being taken; try again after `seconds`.
    package static func busy(retryAfter seconds: Int) -> HTTPResponse {
        .error(429, ProfileRequestError.busy.description, extraHeaders: [HTTPHeader("Retry-After", String(max(1, seconds)))])
    }

    /// The answer carrying the provider's status line.
    package static func statusResponse(_ json: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("X-Content-Type-Options", "nosniff")],
                     body: Array((json.hasSuffix("\n") ? json : json + "\n").utf8))
    }

    private static func contentType(of format: OutputFormat) -> String {
        switch format {
        case .pprof: "application/octet-stream"
        case .svg: "image/svg+xml"
        case .folded: "text/plain; charset=utf-8"
        case .speedscope: "application/json"
        }
    }

    /// A profile route, or a 400 naming the bad parameter. `mode` and `format` nil: taken from the query.
    private static func profile(_ query: inout Query, maxSeconds: Int, mode fixedMode: SamplingMode?, format fixedFormat: OutputFormat?,
                                attachment: String?) -> Route {
        do throws(HTTPResponse) {
            let seconds = try query.integer("seconds", in: 1...maxSeconds, default: min(defaultSeconds, maxSeconds))
            var mode = fixedMode ?? .cpu
            if fixedMode == nil { mode = try query.choice("mode", SamplingMode.allCases, default: .cpu) }
            var formats = [fixedFormat ?? .pprof]
            if fixedFormat == nil { formats = try query.choices("format", OutputFormat.allCases, default: .pprof) }
            let format = formats[0]
            return .profile(ProfileQuery(seconds: seconds, mode: mode, format: format, attachmentName: format == .pprof ? attachment : nil,
                                         moreFormats: Array(formats.dropFirst())))
        } catch {
            return .respond(error)
        }
    }

    /// A calls route, or a 400 naming the bad parameter. `trace`: the invocations endpoint (a trace format).
    private static func calls(_ query: inout Query, maxSeconds: Int, accept: String?, trace: Bool = false) -> Route {
        do throws(HTTPResponse) {
            let seconds = try query.integer("seconds", in: 1...maxSeconds, default: min(defaultSeconds, maxSeconds))
            let function = try query.value("function")
            if trace {
                // OTLP is named so that a client asking for it learns what is served instead.
                let formats = InvocationFormat.allCases.map(\.rawValue).joined(separator: ", ")
                if try query.value("format") == "otlp" { throw .error(400, "bad format: otlp is not served here yet; one of \(formats)") }
                let format = try query.choice("format", InvocationFormat.allCases, default: .chrome)
                return .calls(CallsQuery(seconds: seconds, function: function, answer: .trace(format)))
            }
            let json = try query.choice("format", TableFormat.allCases, default: Self.acceptsJSON(accept) ? .json : .text) == .json
            return .calls(CallsQuery(seconds: seconds, function: function, answer: .table(json: json)))
        } catch {
            return .respond(error)
        }
    }

    /// Whether an `Accept` header names JSON.
    private static func acceptsJSON(_ accept: String?) -> Bool {
        accept?.split(separator: ",").contains { $0.drop { $0 == " " }.hasPrefix("application/json") } ?? false
    }

    /// The calls table's formats.
    private enum TableFormat: String, CaseIterable {
        case json, text
    }

    /// The endpoints, by path.
    private enum Endpoint {
        case index, status, goProfile, wall, general, flameGraph, folded, calls, invocations, stalls, releaseListen

        init?(path: String) {
            switch path {
            case "/debug/pprof/", "/debug/pprof", "/debug/stacksampler/", "/debug/stacksampler": self = .index
            case "/debug/pprof/profile": self = .goProfile
            case "/debug/stacksampler/wall": self = .wall
            case "/debug/stacksampler/profile": self = .general
            case "/debug/stacksampler/flamegraph.svg": self = .flameGraph
            case "/debug/stacksampler/folded": self = .folded
            case "/debug/stacksampler/status": self = .status
            case "/debug/stacksampler/calls": self = .calls
            case "/debug/stacksampler/invocations": self = .invocations
            case "/debug/stacksampler/stalls": self = .stalls
            case "/debug/stacksampler/listen/release": self = .releaseListen
            default: return nil
            }
        }
    }

    /// The index page: the endpoints and what they take.
    private static let index: HTTPResponse = {
        let rows = [
            ("/debug/pprof/profile?seconds=30", "CPU profile of the next N seconds, gzip-compressed profile.proto (go tool pprof URL)"),
            ("/debug/stacksampler/wall?seconds=30", "the same in wall-clock mode (running and blocked threads)"),
            ("/debug/stacksampler/flamegraph.svg?seconds=10&mode=cpu", "interactive flame graph of the next N seconds (mode cpu or wall)"),
            ("/debug/stacksampler/folded?seconds=10&mode=cpu", "collapsed stacks of the next N seconds, text"),
            ("/debug/stacksampler/profile?seconds=10&mode=cpu&format=pprof", "any format: pprof, folded, svg or speedscope"),
            ("/debug/stacksampler/calls?seconds=10", "which calls were slow: count, p50, p90, p99 and max of each function's calls in the next N seconds, and the slowest (invocations on; format json or text, function=GLOB)"),
            ("/debug/stacksampler/invocations?seconds=10&format=chrome", "the calls of the next N seconds as a trace: chrome, speedscope or spans"),
            ("/debug/stacksampler/stalls", "the recent stall reports (a stall threshold set)"),
            ("/debug/stacksampler/status", "what the profiler does, as JSON"),
        ]
        var html = "<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n<p>StackSampler profiling endpoints (one profile at a time):</p>\n<ul>\n"
        for (link, text) in rows {
            html += "<li><a href=\"\(link.replacingAmpersands)\">\(link.replacingAmpersands)</a>: \(text)</li>\n"
        }
        html += "</ul>\n</body>\n</html>\n"
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/html; charset=utf-8"), HTTPHeader("X-Content-Type-Options", "nosniff")],
                            body: Array(html.utf8))
    }()

    /// `text` made safe to echo in a plain-text error: printable ASCII, at most 100 characters.
    private static func printable(_ text: String) -> String {
        let shown = text.unicodeScalars.prefix(100).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "?" }.joined()
        return "'" + shown + (text.unicodeScalars.count > 100 ? "…'" : "'")
    }

    /// A request's query arguments, checked one parameter at a time.
    private struct Query {
        let arguments: [(name: String, value: String?)]

        init(_ arguments: [(name: String, value: String?)]) {
            self.arguments = arguments
        }

        /// The value of `name`: nil if absent or empty; 400 if given more than once.
        func value(_ name: String) throws(HTTPResponse) -> String? {
            let values = arguments.filter { $0.name == name }
            guard values.count <= 1 else { throw .error(400, "bad \(name): given \(values.count) times; give it once") }
            guard let value = values.first?.value, !value.isEmpty else { return nil }
            return value
        }

        func integer(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(HTTPResponse) -> Int {
            guard let text = try value(name) else { return fallback }
            let accepted = "must be a whole number of seconds from \(range.lowerBound) to \(range.upperBound)"
            guard text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = Int(text) else {
                throw .error(400, "bad \(name): \(Routes.printable(text)) \(accepted)")
            }
            guard range.contains(number) else {
                throw .error(400, "bad \(name): \(number) \(accepted) (the server's bound, STACKSAMPLER_MAX_REQUEST_SECONDS, is \(range.upperBound))")
            }
            return number
        }

        /// One or more of `values`, separated by commas, each once.
        func choices<Value: RawRepresentable<String> & Equatable>(_ name: String, _ values: [Value], default fallback: Value) throws(HTTPResponse) -> [Value] {
            guard let text = try value(name) else { return [fallback] }
            var chosen: [Value] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                guard let value = values.first(where: { $0.rawValue == item }), !chosen.contains(value) else {
                    throw .error(400, "bad \(name): \(Routes.printable(text)) must be one of \(values.map(\.rawValue).joined(separator: ", ")) (or several, separated by commas, each once)")
                }
                chosen.append(value)
            }
            return chosen
        }

        func choice<Value: RawRepresentable<String>>(_ name: String, _ values: [Value], default fallback: Value) throws(HTTPResponse) -> Value {
            guard let text = try value(name) else { return fallback }
            guard let chosen = values.first(where: { $0.rawValue == text }) else {
                throw .error(400, "bad \(name): \(Routes.printable(text)) must be one of \(values.map(\.rawValue).joined(separator: ", "))")
            }
            return chosen
        }
    }
}

extension HTTPResponse: Error {}

private extension String {
    var replacingAmpersands: String { split(separator: "&", omittingEmptySubsequences: false).joined(separator: "&amp;") }
}
