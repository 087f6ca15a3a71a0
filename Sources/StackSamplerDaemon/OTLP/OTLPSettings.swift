import Glibc
import StackSampler

/// Where and how windows are pushed over OTLP/HTTP (protobuf), from OpenTelemetry's own
/// variables (`SessionSettings` names them): `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL; the
/// signal's path appended), `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and
/// `OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT` (full URLs, each over the base),
/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_PROTOCOL` (http/protobuf only),
/// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_SDK_DISABLED`. A signal is pushed
/// only where an endpoint variable names a collector for it: the variables alone never make
/// the profiler send anything to a default address.
package struct OTLPSettings: Sendable {
    /// Where spans go (`…/v1/traces`); nil: no span is pushed.
    package var tracesURL: String?
    /// Where profiles go (`…/v1development/profiles`); nil: no profile is pushed.
    package var profilesURL: String?
    /// Sent with every request.
    package var headers: [(name: String, value: String)]
    /// What every request says of the process.
    package var resource: OTLPResource
    /// Requests waiting at most; the oldest is dropped for a new one beyond it.
    package var queueLength: Int

    /// Settings with these URLs, headers and resource; 16 requests waiting at most (8 windows' worth).
    package init(tracesURL: String?, profilesURL: String?, headers: [(name: String, value: String)] = [],
                resource: OTLPResource, queueLength: Int = 16) {
        self.tracesURL = tracesURL
        self.profilesURL = profilesURL
        self.headers = headers
        self.resource = resource
        self.queueLength = queueLength
    }

    /// The base URL's signal paths, as the OTLP exporter specification appends them.
    static let tracesPath = "v1/traces", profilesPath = "v1development/profiles"

    /// The settings from `variable` (the environment's lookup, or a table in tests); nil when
    /// `OTEL_SDK_DISABLED` is true or no endpoint is given. `executableName` and `processID` fill
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
        if try value(SessionSettings.otelSDKDisabled) == true { return nil }
        let base = try value(SessionSettings.otlpEndpoint).map { url in
            var url = url
            while url.hasSuffix("/") { url.removeLast() }
            return url
        }
        let traces = try value(SessionSettings.otlpTracesEndpoint) ?? base.map { "\($0)/\(tracesPath)" }
        let profiles = try value(SessionSettings.otlpProfilesEndpoint) ?? base.map { "\($0)/\(profilesPath)" }
        guard traces != nil || profiles != nil else { return nil }
        _ = try value(SessionSettings.otlpProtocol)
        let headers = try value(SessionSettings.otlpHeaders) ?? []
        var resource = OTLPResource([
            OTLPAttribute("service.name", .string(executableName)),
            OTLPAttribute("process.pid", .int(Int64(processID))),
            OTLPAttribute("process.executable.name", .string(executableName)),
            OTLPAttribute("telemetry.sdk.name", .string("stacksampler")),
        ])
        for (key, text) in try value(SessionSettings.otelResourceAttributes) ?? [] { resource.set(OTLPAttribute(key, .string(text))) }
        if let service = try value(SessionSettings.otelServiceName) { resource.set(OTLPAttribute("service.name", .string(service))) }
        return OTLPSettings(tracesURL: traces, profilesURL: profiles, headers: headers.map { (name: $0.key, value: $0.value) },
                            resource: resource, queueLength: 2 * (windowQueue ?? SessionSettings.pushQueue.defaultValue!))
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
