import Foundation
import Testing
@testable import StackSampler
import TestSupport
@testable import StackSamplerDaemon

/// The OTLP pusher with a fake transport.
@Suite struct OTLPPusherTests {
    let quick = PushPolicy(initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(4), maxAttempts: 3, requestTimeout: .seconds(5))

    @Test("a window becomes a profiles request and, when calls ended in it, a traces request, each to its URL with the headers")
    func eachWindowMakesItsRequests() throws {
        let transport = ScriptedTransport([])
        let settings = OTLPSettings(traces: OTLPSignalSettings(url: "http://c/v1/traces", headers: [("api-key", "k")]),
                                    profiles: OTLPSignalSettings(url: "http://c/v1development/profiles", headers: [("api-key", "k")]),
                                    resource: OTLPResource([OTLPAttribute("service.name", .string("s"))]))
        let pusher = try OTLPPusher(settings: settings, policy: quick, transport: transport)
        pusher.push(profileWithCalls())
        pusher.push(handMadeProfile())
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.pushed == 3 && counters.dropped == 0)
        #expect(transport.requests.map(\.url) == ["http://c/v1development/profiles", "http://c/v1/traces", "http://c/v1development/profiles"])
        for request in transport.requests {
            #expect(request.method == .post && request.header("Content-Type") == "application/x-protobuf" && request.header("api-key") == "k")
        }
        let spans = try decodedOTLP(transport.requests[1].body, signal: "traces")["spans"] as? [[String: Any]]
        #expect(spans?.count == 4)
    }

    @Test("each signal's request goes with its own headers, timeout and compression: a gzip body says so and unzips to what the official definitions decode")
    func signalOptionsShapeTheRequests() throws {
        let transport = ScriptedTransport([])
        let settings = OTLPSettings(traces: OTLPSignalSettings(url: "http://c/v1/traces", headers: [("x-signal", "traces")],
                                                               timeout: .milliseconds(1500), compression: .gzip),
                                    profiles: OTLPSignalSettings(url: "http://c/v1development/profiles", headers: [("x-signal", "profiles")]),
                                    resource: OTLPResource([OTLPAttribute("service.name", .string("s"))]))
        // The default policy: requests are held to the longest signal timeout, each to its own.
        let pusher = try OTLPPusher(settings: settings, transport: transport)
        let profile = profileWithCalls()
        pusher.push(profile)
        #expect(pusher.stop(deadline: .seconds(20)).pushed == 2)
        try #require(transport.requests.count == 2)
        let (profiles, traces) = (transport.requests[0], transport.requests[1])
        #expect(profiles.header("x-signal") == "profiles" && profiles.header("Content-Encoding") == nil && profiles.totalTimeoutMilliseconds == 10_000)
        #expect(traces.header("x-signal") == "traces" && traces.header("Content-Encoding") == "gzip" && traces.totalTimeoutMilliseconds == 1500)
        #expect(traces.body.starts(with: [0x1f, 0x8b]), "not a gzip member")
        let spans = try decodedOTLP(try gunzip(traces.body), signal: "traces")["spans"] as? [[String: Any]]
        #expect(spans?.map { $0["name"] as? String } == profile.invocations.map(\.name))
        #expect((try decodedOTLP(profiles.body, signal: "profiles")["profiles"] as? [[String: Any]])?.isEmpty == false)
    }

    @Test("a caller sent windows after its callee still encloses it: the realtime offset is kept through its ns of noise, and follows a clock step")
    func spansOfDifferentWindowsNest() throws {
        let transport = ScriptedTransport([])
        let pusher = try OTLPPusher(settings: OTLPSettings(traces: OTLPSignalSettings(url: "http://c/v1/traces"), profiles: nil, resource: OTLPResource()),
                                    policy: quick, transport: transport)
        let calls = profileWithCalls()
        // Window 1: the callee `parse` ends. Window 2, its realtime offset measured 15 ns larger:
        // the caller `main` ends, seen first in the same sample as `parse` (the same start).
        var first = calls, second = calls
        first.invocations = [calls.invocations[1]]
        var caller = calls.invocations[0]
        caller.startNanoseconds = calls.invocations[1].startNanoseconds
        second.invocations = [caller]
        second.startNanoseconds += 500_000_000
        second.realtimeStartNanoseconds += 500_000_000 + 15
        // Window 3: the realtime clock was set 2 s ahead.
        var third = second
        third.startNanoseconds += 500_000_000
        third.realtimeStartNanoseconds += 500_000_000 + 2_000_000_000
        for window in [first, second, third] { pusher.push(window) }
        pusher.stop(deadline: .seconds(10))
        let spans = try transport.requests.map { try #require((try decodedOTLP($0.body, signal: "traces")["spans"] as? [[String: Any]])?.first) }
        try #require(spans.count == 3)
        let (callee, enclosing, afterStep) = (spans[0], spans[1], spans[2])
        #expect(callee["parent_span_id"] as? String == enclosing["span_id"] as? String)
        let calleeStart = try #require(callee["start"] as? Int), callerStart = try #require(enclosing["start"] as? Int)
        #expect(callerStart <= calleeStart, "the caller starts \(callerStart - calleeStart) ns after its callee")
        let calleeEnd = try #require(callee["end"] as? Int), callerEnd = try #require(enclosing["end"] as? Int)
        #expect(calleeEnd <= callerEnd)
        #expect(afterStep["start"] as? Int == callerStart + 2_000_000_015)
    }

    @Test("a collector that refuses the profiles signal does not stop the spans")
    func aRefusedSignalIsCountedAlone() throws {
        let transport = ScriptedTransport([.success(HTTPClientResponse(status: 404, body: Array("404 page not found".utf8)))])
        let settings = OTLPSettings(traces: OTLPSignalSettings(url: "http://c/v1/traces"),
                                    profiles: OTLPSignalSettings(url: "http://c/v1development/profiles"), resource: OTLPResource())
        let pusher = try OTLPPusher(settings: settings, policy: quick, transport: transport)
        pusher.push(profileWithCalls())
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.droppedRejected == 1 && counters.pushed == 1 && counters.retried == 0)
        #expect(pusher.lastError == "HTTP 404: 404 page not found")
    }

    @Test("over real HTTP, the profile and the spans reach a collector at their signal's paths and decode with the official definitions")
    func overHTTP() throws {
        let receiver = IngestReceiver()
        try receiver.start()
        defer { receiver.stop() }
        let variables = ["OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_SERVICE_NAME": "checkout", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k"]
        let settings = try #require(try OTLPSettings.read({ variables[$0] }, executableName: "shop-api", processID: 99))
        let pusher = try OTLPPusher(settings: settings, policy: quick, transport: HTTPClient())
        let profile = profileWithCalls()
        pusher.push(profile)
        let counters = pusher.stop(deadline: .seconds(20))
        #expect(counters.pushed == 2 && counters.dropped == 0, "\(pusher.lastError ?? "")")
        let requests = receiver.requests
        #expect(requests.map(\.path) == ["/v1development/profiles", "/v1/traces"])
        try #require(requests.count == 2)
        for request in requests {
            #expect(request.method == "POST" && request.headers["content-type"] == "application/x-protobuf" && request.headers["api-key"] == "k")
        }
        let profiles = try decodedOTLP(requests[0].body, signal: "profiles")
        #expect((profiles["resource"] as? [String: Any])?["service.name"] as? String == "checkout")
        #expect(((profiles["profiles"] as? [[String: Any]])?.first?["total"] as? Int) == profile.sampleCount)
        let traces = try decodedOTLP(requests[1].body, signal: "traces")
        #expect((traces["resource"] as? [String: Any])?["process.pid"] as? Int == 99)
        let spans = try #require(traces["spans"] as? [[String: Any]])
        #expect(spans.map { $0["name"] as? String } == profile.invocations.map(\.name))
        #expect(spans[2]["parent_span_id"] as? String == spans[1]["span_id"] as? String)
        #expect(spans.map { ($0["end"] as? Int ?? 0) - ($0["start"] as? Int ?? 0) } == profile.invocations.map { Int($0.durationNanoseconds) })
    }
}
