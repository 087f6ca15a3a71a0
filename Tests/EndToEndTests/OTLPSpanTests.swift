import Foundation
import Testing

extension EndToEnd.OTLPPush {
    /// One span as the stand-in collector decoded it.
    struct Span {
        var traceID: String
        var spanID: String
        /// "" for a root span.
        var parentSpanID: String
        var name: String
        /// Unix ns.
        var start: Int
        var end: Int
        var attributes: [String: Any]

        init(_ object: [String: Any]) throws {
            traceID = try #require(object["trace_id"] as? String)
            spanID = try #require(object["span_id"] as? String)
            parentSpanID = try #require(object["parent_span_id"] as? String)
            name = try #require(object["name"] as? String)
            start = try #require(object["start"] as? Int)
            end = try #require(object["end"] as? Int)
            attributes = object["attributes"] as? [String: Any] ?? [:]
        }

        var milliseconds: Double { Double(end - start) / 1e6 }
        var threadID: Int? { attributes["thread.id"] as? Int }
    }

    /// Who calls each function `call_service` times, as its source says.
    static let callers = ["handle_request": "worker", "query_database": "handle_request", "render_page": "handle_request", "long_call": "worker"]

    @Test("a service's calls reach the collector as spans: nested as they nest, named by their functions, each call the service timed there at its length and thread, on the service's resource",
          arguments: [1, 10])
    func callsArePushedAsSpans(periodMilliseconds period: Int) throws {
        let (directory, received, collector, port) = try Self.startCollector("otlp-spans-\(period)ms")
        defer { collector.terminate() }
        let run = try ChildProcess.run(try TestProgram.callService.executable(), ["5", "1600"], environment: [
            "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "1s", "STACKSAMPLER_MODE": "wall",
            "STACKSAMPLER_PERIOD": "\(period)ms", "STACKSAMPLER_INVOCATIONS": "1", "STACKSAMPLER_CALLS": directory + "/calls-%t.json",
            "STACKSAMPLER_SUMMARY": directory + "/s-%t.txt",
            // The signal's own endpoint is used as given: no path is appended to it.
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:\(port)/collector/v1/traces",
            "OTEL_SERVICE_NAME": "checkout", "OTEL_RESOURCE_ATTRIBUTES": "service.name=not-this-one,deployment.environment.name=e2e",
        ], in: directory)
        #expect(run.termination == .exited(0), "\(run)")
        let requests = try Self.requests(in: received)
        try #require(!requests.isEmpty, "no request reached the collector\n\(run.stderr)")
        var spans: [Span] = []
        for request in requests {
            #expect(request["path"] as? String == "/collector/v1/traces" && (request["problems"] as? [String]) == [],
                    "\(request["path"] ?? "?"): \(request["problems"] ?? "")")
            let resource = try #require(request["resource"] as? [String: Any])
            #expect(resource["service.name"] as? String == "checkout" && resource["deployment.environment.name"] as? String == "e2e"
                    && resource["process.pid"] as? Int == Int(run.pid) && resource["process.executable.name"] as? String == "call_service",
                    "\(resource)")
            spans += try (request["spans"] as? [[String: Any]] ?? []).map(Span.init)
        }

        // Every span's parent was sent too, in the same trace, and encloses it; the timed functions'
        // parents are their callers.
        let byID = Dictionary(spans.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byID.count == spans.count, "\(spans.count - byID.count) span ids sent twice")
        for span in spans {
            #expect(span.attributes["code.function.name"] as? String == span.name && span.threadID != nil
                    && !(span.attributes["thread.name"] as? String ?? "").isEmpty, "\(span.name): \(span.attributes)")
            if let caller = Self.callers[span.name] {
                #expect(byID[span.parentSpanID]?.name == caller, "\(span.name)'s parent is \(byID[span.parentSpanID]?.name ?? "none"), not \(caller)")
            }
            guard !span.parentSpanID.isEmpty else { continue }
            guard let parent = byID[span.parentSpanID] else {
                Issue.record("\(span.name)'s parent span \(span.parentSpanID) was never sent")
                continue
            }
            #expect(parent.traceID == span.traceID && parent.start <= span.start && span.end <= parent.end,
                    "\(span.name) [\(span.start), \(span.end)] of trace \(span.traceID) is not inside its parent \(parent.name) [\(parent.start), \(parent.end)] of trace \(parent.traceID)")
        }

        // Each call the program timed is a span of its function on its thread, overlapping it, as
        // long as it measured and ending when it ended, within max(25 %, 4 periods), and no other
        // call's span. Where that fails, a window the call touches (or the 25 ms gaps next to it)
        // must say it skipped ticks (a sleep over before the sampler walked it: on a machine this
        // loaded that the sampler wakes late, a gap between two calls goes unseen and merges them),
        // so that no wrong span goes unsaid; most calls must hold all the same. The first window is
        // left out (its first samples make the sampler thread read symbol tables, and ticks that
        // come late meanwhile can merge or split calls; as in ContinuousCalls).
        let calls = EndToEnd.ContinuousCalls.timedCalls(run.stdout)
        let windowFiles = try EndToEnd.ContinuousMode.windowFiles(in: directory, prefix: "calls-", suffix: ".json")
        let windows = try windowFiles.map { path in
            let window = try EndToEnd.ContinuousCalls.Window(json: path)
            // The window's summary has the calls table's stamp.
            let stamp = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent.dropFirst("calls-".count)
            let summary = try String(contentsOfFile: "\(directory)/s-\(stamp).txt", encoding: .utf8)
            let skipped = try #require(summary.firstMatch(of: /(\d+) skipped ticks/).flatMap { Int($0.1) }, "no skipped ticks in \(summary)")
            return (start: Double(window.startUnixNanoseconds), end: Double(window.startUnixNanoseconds + window.durationNanoseconds), skipped: skipped)
        }
        let firstWindowEnd = try #require(windows.first, "no calls table was written").end
        let timed = spans.filter { Self.callers[$0.name] != nil }
        let checked = calls.filter { Double($0.endUnixNanoseconds) - $0.milliseconds * 1e6 >= firstWindowEnd }
        func overlap(_ span: Span, _ call: EndToEnd.ContinuousCalls.TimedCall) -> Double {
            min(Double(span.end), Double(call.endUnixNanoseconds)) - max(Double(span.start), Double(call.endUnixNanoseconds) - call.milliseconds * 1e6)
        }
        let matches = checked.map { call in
            timed.filter { $0.name == call.name && $0.threadID == call.thread && overlap($0, call) > 0 }.max { overlap($0, call) < overlap($1, call) }
        }
        let uses = Dictionary(matches.compactMap { $0.map { ($0.spanID, 1) } }, uniquingKeysWith: +)
        var held = 0
        for (call, span) in zip(checked, matches) {
            let band = max(0.25 * call.milliseconds, 4 * Double(period))
            let end = Double(call.endUnixNanoseconds), start = end - call.milliseconds * 1e6
            var problem: String?
            if let span, uses[span.spanID, default: 0] > 1 {
                problem = "its span (\(span.milliseconds) ms) is that of another call too"
            } else if let span, abs(span.milliseconds - call.milliseconds) > band || abs(Double(span.end) - end) > band * 1e6 + 2e6 {
                problem = "its span lasts \(span.milliseconds) ms and ends \((Double(span.end) - end) / 1e6) ms from it"
            } else if span == nil {
                problem = "no span of it"
            }
            guard let problem else {
                held += 1
                continue
            }
            let said = windows.contains { $0.skipped > 0 && $0.start < end + 1e8 && $0.end > start - 1e8 }
            #expect(said, "\(call.name) on thread \(call.thread) at \(period) ms, \(call.milliseconds) ms ending at \(call.endUnixNanoseconds): \(problem), and no window around it skipped a tick")
        }
        #expect(checked.count >= 20 && held * 2 >= checked.count, "\(held) of \(checked.count) calls found at their length")
        // No span of those functions where the program made no such call.
        let unfounded = timed.filter { span in Double(span.start) >= firstWindowEnd && !calls.contains { $0.name == span.name && $0.thread == span.threadID && overlap(span, $0) > 0 } }
        #expect(unfounded.isEmpty, "spans that are none of the program's calls: \(unfounded.map { "\($0.name) \($0.milliseconds) ms ending at \($0.end) on \($0.threadID ?? 0)" })")
    }
}
