import Glibc
import StackSampler

/// Where and how one signal is pushed.
package struct OTLPSignalSettings: Sendable {
    /// The URL requests are posted to.
    package var url: String
    /// Sent with every request.
    package var headers: [(name: String, value: String)]
    /// The longest one request may take.
    package var timeout: Duration
    /// How bodies are compressed.
    package var compression: OTLPCompression

    /// A signal pushed to `url` with these headers, by default with the table's timeout
    /// (OpenTelemetry's 10 s) and compression (none).
    package init(url: String, headers: [(name: String, value: String)] = [],
                timeout: Duration = SessionSettings.otlpTimeout.general.defaultValue!,
                compression: OTLPCompression = SessionSettings.otlpCompression.general.defaultValue!) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.compression = compression
    }
}

/// Where and how windows are pushed over OTLP/HTTP (protobuf), from OpenTelemetry's own
/// variables (`SessionSettings` names them): `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL; the
/// signal's path appended), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
/// `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT` (full URLs used as given, each over the base),
/// `OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`, `…_COMPRESSION` and `…_PROTOCOL` (http/protobuf
/// only), each overridden for one signal by its `OTEL_EXPORTER_OTLP_TRACES_…` or
/// `OTEL_EXPORTER_OTLP_PROFILES_…` variable, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and
/// `OTEL_SDK_DISABLED`. A signal is pushed only where an endpoint variable names a collector for
/// it: the variables alone never make the profiler send anything to a default address.
package struct OTLPSettings: Sendable {
    /// How spans are pushed; nil: no span is pushed.
    package var traces: OTLPSignalSettings?
    /// How profiles are pushed; nil: no profile is pushed.
    package var profiles: OTLPSignalSettings?
    /// What every request says of the process.
    package var resource: OTLPResource
    /// Requests waiting at most; the oldest is dropped for a new one beyond it.
    package var queueLength: Int

    /// Settings for these signals and resource; 16 requests waiting at most (8 windows' worth).
    package init(traces: OTLPSignalSettings?, profiles: OTLPSignalSettings?, resource: OTLPResource, queueLength: Int = 16) {
        self.traces = traces
        self.profiles = profiles
        self.resource = resource
        self.queueLength = queueLength
    }

    /// The settings of `signal`.
    package subscript(signal: OTLPSignal) -> OTLPSignalSettings? {
        switch signal {
        case .traces: traces
        case .profiles: profiles
        }
    }

    /// The longest a request of either signal may take.
    package var longestTimeout: Duration {
        [traces, profiles].compactMap { $0?.timeout }.max() ?? SessionSettings.otlpTimeout.general.defaultValue!
    }

    /// The base URL's signal paths, as the OTLP exporter specification appends them.
    static func path(of signal: OTLPSignal) -> String {
        switch signal {
        case .traces: "v1/traces"
        case .profiles: "v1development/profiles"
        }
    }

    /// The settings from `variable` (the environment's lookup, or a table in tests); nil when
    /// `OTEL_SDK_DISABLED` is true or no endpoint is given. Each option of a signal is its own
    /// variable's value, else the general variable's, else OpenTelemetry's default (an empty
    /// value counts as unset, as the specification says). `executableName` and `processID` fill
    /// the resource's `process.*` attributes and, without `OTEL_SERVICE_NAME`, `service.name`.
    /// `windowQueue` (`STACKSAMPLER_PUSH_QUEUE`, windows) bounds the queue at two requests a window.
    /// The error names the variable and what it takes.
    package static func read(_ variable: (String) -> String?, executableName: String, processID: Int32,
                            windowQueue: Int? = nil) throws(PushError) -> OTLPSettings? {
        func value<Value>(_ setting: Setting<Value>) throws(PushError) -> Value? {
            guard let text = variable(setting.variable), !text.isEmpty else { return nil }
            do { return try setting.parse(text, from: .environment) } catch {
                throw .invalid("\(error.description); nothing is pushed over OTLP")
            }
        }
        func value<Value>(_ setting: OTLPSignalSetting<Value>, for signal: OTLPSignal) throws(PushError) -> Value? {
            if let own = try value(setting.setting(for: signal)) { return own }
            return try value(setting.general)
        }
        if try value(SessionSettings.otelSDKDisabled) == true { return nil }
        let base = try value(SessionSettings.otlpEndpoint).map { url in
            var url = url
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        func signalSettings(_ signal: OTLPSignal, endpoint: Setting<String>) throws(PushError) -> OTLPSignalSettings? {
            guard let url = try value(endpoint) ?? base.map({ "\($0)/\(path(of: signal))" }) else { return nil }
            _ = try value(SessionSettings.otlpProtocol, for: signal)
            let compression = try value(SessionSettings.otlpCompression, for: signal) ?? SessionSettings.otlpCompression.general.defaultValue!
            if compression == .gzip, !Gzip.isAvailable {
                throw .invalid("gzip compression for \(signal.rawValue) (OTEL_EXPORTER_OTLP_COMPRESSION) needs libz.so.1, which cannot be loaded: "
                    + "install zlib1g, or give none; nothing is pushed over OTLP")
            }
            return OTLPSignalSettings(url: url, headers: (try value(SessionSettings.otlpHeaders, for: signal) ?? []).map { (name: $0.key, value: $0.value) },
                                      timeout: try value(SessionSettings.otlpTimeout, for: signal) ?? SessionSettings.otlpTimeout.general.defaultValue!,
                                      compression: compression)
        }
        let traces = try signalSettings(.traces, endpoint: SessionSettings.otlpTracesEndpoint)
        let profiles = try signalSettings(.profiles, endpoint: SessionSettings.otlpProfilesEndpoint)
        guard traces != nil || profiles != nil else { return nil }
        var resource = OTLPResource([
            OTLPAttribute("service.name", .string(executableName)),
            OTLPAttribute("process.pid", .int(Int64(processID))),
            OTLPAttribute("process.executable.name", .string(executableName)),
            OTLPAttribute("telemetry.sdk.name", .string("stacksampler")),
        ])
        for (key, text) in try value(SessionSettings.otelResourceAttributes) ?? [] { resource.set(OTLPAttribute(key, .string(text))) }
        if let service = try value(SessionSettings.otelServiceName) { resource.set(OTLPAttribute("service.name", .string(service))) }
        return OTLPSettings(traces: traces, profiles: profiles, resource: resource,
                            queueLength: 2 * (windowQueue ?? SessionSettings.pushQueue.defaultValue!))
    }

    /// The settings in the environment (see `read`), for this process.
    package static func fromEnvironment() throws(PushError) -> OTLPSettings? {
        let windowQueue: Int?
        do { windowQueue = try SettingEnvironment.process.value(SessionSettings.pushQueue) } catch { throw .invalid(error.description) }
        return try read(SettingEnvironment.process.text, executableName: executableName(), processID: getpid(),
                        windowQueue: windowQueue)
    }

    /// The base name of `/proc/self/exe`'s target, as the semantic conventions define
    /// `process.executable.name`; the process's name (`comm`) when it cannot be read.
    static func executableName() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return FileIO.processName }
        let path = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init) ?? FileIO.processName
    }
}
