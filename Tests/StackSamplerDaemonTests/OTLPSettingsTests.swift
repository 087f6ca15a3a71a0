import Testing
@testable import StackSampler
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
