import Foundation
import Testing
@testable import StackSampler
import TestSupport
@testable import StackSamplerDaemon

/// OpenTelemetry's variables, read as its SDKs read them.
@Suite struct OTLPSettingsTests {
    func read(_ variables: [String: String]) throws(PushError) -> OTLPSettings? {
        try OTLPSettings.read({ variables[$0] }, executableName: "shop-api", processID: 321)
    }

    @Test("key=value lists are split at commas, trimmed and percent-decoded; a malformed entry is refused")
    func keyValueLists() {
        let parsed = KeyValueList.parse(" a = 1 ,b=x%2Cy%20z,, c=  ")
        #expect(parsed?.map(\.key) == ["a", "b", "c"])
        #expect(parsed?.map(\.value) == ["1", "x,y z", ""])
        #expect(KeyValueList.parse("novalue") == nil)
        #expect(KeyValueList.parse("=1") == nil)
        #expect(KeyValueList.parse("a=%zz") == nil)
    }

    @Test("the base endpoint gets each signal's path, a signal's own endpoint is used as given, and nothing is pushed without one")
    func endpoints() throws {
        let base = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"]))
        #expect(base.traces?.url == "http://collector:4318/v1/traces")
        #expect(base.profiles?.url == "http://collector:4318/v1development/profiles")
        let own = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
                                         "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/ingest/spans"]))
        #expect(own.traces?.url == "https://traces.example/ingest/spans")
        #expect(own.profiles?.url == "http://collector:4318/v1development/profiles")
        let tracesOnly = try #require(try read(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/v1/traces"]))
        #expect(tracesOnly.profiles == nil)
        #expect(try read(["OTEL_SERVICE_NAME": "svc"]) == nil)
        #expect(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"]) == nil)
    }

    @Test("each exporter option of a signal: its own variable over the general one over OpenTelemetry's default; an empty one counts as unset")
    func signalOptions() throws {
        let defaults = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]))
        for signal in OTLPSignal.allCases {
            let settings = try #require(defaults[signal])
            #expect(settings.headers.isEmpty && settings.timeout == .seconds(10) && settings.compression == .none, "\(signal)")
        }
        let general = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=1",
                                             "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
                                             "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": ""]))
        for signal in OTLPSignal.allCases {
            let settings = try #require(general[signal])
            #expect(settings.headers.map(\.name) == ["a"] && settings.timeout == .milliseconds(2500) && settings.compression == .gzip, "\(signal)")
        }
        // A signal's own headers replace the general ones (they are not merged), as OpenTelemetry's SDKs read them.
        let own = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=1",
                                         "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2,c=3", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
                                         "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION": "none", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0",
                                         "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT": "750"]))
        let traces = try #require(own.traces), profiles = try #require(own.profiles)
        #expect(traces.headers.map(\.name) == ["b", "c"] && traces.headers.map(\.value) == ["2", "3"])
        #expect(profiles.headers.map(\.name) == ["a"])
        #expect(traces.compression == .gzip && profiles.compression == .none)
        // 0 is no limit (the specification's Timeout type): the longest a 32-bit count of ms holds.
        #expect(traces.timeout == .milliseconds(Int32.max) && profiles.timeout == .milliseconds(750))
        #expect(own.longestTimeout == .milliseconds(Int32.max))
        // grpc in the general variable, overridden for both signals: nothing left speaks it.
        let overridden = try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                                   "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL": "http/protobuf"])
        #expect(overridden?.traces != nil && overridden?.profiles != nil)
        // Only the signals pushed are read: grpc for profiles does not matter when only spans go out.
        let tracesOnly = try read(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces", "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL": "grpc"])
        #expect(tracesOnly?.traces?.url == "http://c:4318/v1/traces" && tracesOnly?.profiles == nil)
    }

    @Test("the resource: service.name from OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES over the executable's name")
    func resourceAttributes() throws {
        let plain = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]))
        #expect(plain.resource["service.name"] == .string("shop-api"))
        #expect(plain.resource["process.pid"] == .int(321))
        #expect(plain.resource["process.executable.name"] == .string("shop-api"))
        #expect(plain.resource["telemetry.sdk.name"] == .string("stacksampler"))
        let given = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                                           "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attributes,deployment.environment.name=prod%2Ceu",
                                           "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cr%3Dt,x-tenant=a b"]))
        #expect(given.resource["service.name"] == .string("from-attributes"))
        #expect(given.resource["deployment.environment.name"] == .string("prod,eu"))
        let headers = try #require(given.traces?.headers)
        #expect(headers.map(\.name) == ["api-key", "x-tenant"] && headers.map(\.value) == ["s3cr=t", "a b"])
        let named = try #require(try read(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SERVICE_NAME": "checkout",
                                           "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attributes"]))
        #expect(named.resource["service.name"] == .string("checkout"))
    }

    @Test("bad values and grpc are refused with the variable named and what to give", arguments: [
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318", "http://"),
        ("OTEL_RESOURCE_ATTRIBUTES", "team", "key=value"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=%4", "key=value"),
        ("OTEL_SDK_DISABLED", "maybe", "true or false"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "grpc", "http/protobuf"),
        ("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "tenant", "key=value"),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "milliseconds"),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "-1", "milliseconds"),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "gzip or none"),
        ("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "GZIP", "gzip or none"),
    ])
    func badValues(variable: String, value: String, advice: String) {
        var variables = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"]
        variables[variable] = value
        do {
            _ = try read(variables)
            Issue.record("\(variable)=\(value) was accepted")
        } catch {
            #expect(error.description.contains("\(variable)=\(value)") && error.description.contains(advice), "\(error)")
        }
    }
}

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
        pusher.push(OTLPEncoderTests().profileWithCalls())
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
        let profile = OTLPEncoderTests().profileWithCalls()
        pusher.push(profile)
        #expect(pusher.stop(deadline: .seconds(20)).pushed == 2)
        try #require(transport.requests.count == 2)
        let (profiles, traces) = (transport.requests[0], transport.requests[1])
        #expect(profiles.header("x-signal") == "profiles" && profiles.header("Content-Encoding") == nil && profiles.totalTimeoutMilliseconds == 10_000)
        #expect(traces.header("x-signal") == "traces" && traces.header("Content-Encoding") == "gzip" && traces.totalTimeoutMilliseconds == 1500)
        #expect(traces.body.starts(with: [0x1f, 0x8b]), "not a gzip member")
        let spans = try decodedOTLP(try DecodedPprof.gunzip(traces.body), signal: "traces")["spans"] as? [[String: Any]]
        #expect(spans?.map { $0["name"] as? String } == profile.invocations.map(\.name))
        #expect((try decodedOTLP(profiles.body, signal: "profiles")["profiles"] as? [[String: Any]])?.isEmpty == false)
    }

    @Test("a caller sent windows after its callee still encloses it: the realtime offset is kept through its ns of noise, and follows a clock step")
    func spansOfDifferentWindowsNest() throws {
        let transport = ScriptedTransport([])
        let pusher = try OTLPPusher(settings: OTLPSettings(traces: OTLPSignalSettings(url: "http://c/v1/traces"), profiles: nil, resource: OTLPResource()),
                                    policy: quick, transport: transport)
        let calls = OTLPEncoderTests().profileWithCalls()
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
        pusher.push(OTLPEncoderTests().profileWithCalls())
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
        let profile = OTLPEncoderTests().profileWithCalls()
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
