/// The settings of a profiling session, each defined once with its variable, option, default,
/// range and message: the preload library and the daemon read them from the environment
/// (`SettingEnvironment`, where an empty variable is unset), `stacksampler record` takes its
/// options' defaults and help from them, checks its options through them and hands them to the
/// preload as those variables, and `ProfilerConfiguration` takes its defaults from them and checks
/// the API's values against the same ranges. To add a setting: add it here, read it where the
/// preload reads the others (`PreloadSettings`), give `record` its option (default and range from
/// here) and pass it on, and, if the API takes it, give `ProfilerConfiguration` a property checked
/// in `validated()`. If the setting alone makes a process profile, the preload's constructor
/// (StackSamplerPreload/constructor.c) must name it too; `SessionSettingsTests` checks that it does.
@usableFromInline
package enum SessionSettings {
    /// Time between two samples of one thread.
    @usableFromInline
    package static let period = Setting<Duration>(
        variable: "STACKSAMPLER_PERIOD", option: "--period", noun: "a sampling period",
        examples: "a number with a unit such as 10ms, 500us or 1s", in: .microseconds(50)...(.seconds(60)), default: .milliseconds(10))
    /// What drives sampling.
    @usableFromInline
    package static let mode = Setting<SamplingMode>(
        variable: "STACKSAMPLER_MODE", option: "--mode", noun: "a sampling mode", expected: "cpu or wall", default: .cpu,
        parser: { SamplingMode(rawValue: $0) })
    /// What produces cpu-mode samples.
    package static let engine = Setting<SamplingEngine>(
        variable: "STACKSAMPLER_ENGINE", option: "--engine", noun: "an engine", expected: "auto, perf or timer", default: .auto,
        parser: { SamplingEngine(rawValue: $0) })
    /// An event to sample instead of CPU time.
    package static let event = Setting<SamplingEvent>(
        variable: "STACKSAMPLER_EVENT", option: "--event", noun: "an event",
        expected: "one of \(SamplingEvent.allCases.map(\.rawValue).joined(separator: ", "))", parser: { SamplingEvent(rawValue: $0) })
    /// A sample every this many events.
    package static let eventPeriod = Setting<Int>(
        variable: "STACKSAMPLER_EVENT_PERIOD", option: "--event-period", noun: "an event period",
        kind: "a whole number of events", in: 1..., default: 1)
    /// Frames kept per sample.
    @usableFromInline
    package static let maxDepth = Setting<Int>(
        variable: "STACKSAMPLER_MAX_DEPTH", option: "--max-depth", noun: "a depth", kind: "a whole number", in: 1...4096, default: 256)
    /// Samples the engine's buffer holds.
    @usableFromInline
    package static let bufferSize = Setting<Int>(
        variable: "STACKSAMPLER_BUFFER_SIZE", option: "--buffer-size", noun: "a buffer size",
        kind: "a number of samples", in: 16...1_048_576, default: 1024)
    /// Whether Swift jobs show their task's async callers.
    package static let asyncStacks = Setting<Bool>(
        variable: "STACKSAMPLER_ASYNC_STACKS", option: "--no-async-stacks", noun: "a switch", expected: "1 (async callers) or 0 (machine stacks)",
        default: true, parser: switchValue)
    /// Where separate debug files are looked up.
    package static let debugRoot = Setting<String>(
        variable: "STACKSAMPLER_DEBUG_ROOT", option: "--debug-root", noun: "a directory", expected: "a path", parser: { $0 })
    /// Whether Swift generic specializations are named apart.
    package static let specializations = Setting<Bool>(
        variable: "STACKSAMPLER_SPECIALIZATIONS", option: "--keep-specializations", noun: "a switch", expected: "1 or 0",
        parser: switchValue)
    /// Whether DWARF is read for source lines and inlined calls.
    package static let lines = Setting<Bool>(
        variable: "STACKSAMPLER_LINES", option: "--lines", noun: "a switch", expected: "1 or 0", parser: switchValue)
    /// A root frame per thread.
    package static let perThread = Setting<Bool>(
        variable: "STACKSAMPLER_PER_THREAD", option: "--per-thread", noun: "a switch", expected: "1 or 0", parser: switchValue)
    /// A root frame per process.
    package static let processRoot = Setting<Bool>(
        variable: "STACKSAMPLER_PROCESS_ROOT", option: "--follow-children", noun: "a switch", expected: "1 or 0", parser: switchValue)
    /// Flame graphs drawn root at the top.
    package static let icicle = Setting<Bool>(
        variable: "STACKSAMPLER_ICICLE", option: "--icicle", noun: "a switch", expected: "1 or 0", parser: switchValue)
    /// The outputs' format, else each file's extension.
    package static let format = Setting<OutputFormat>(
        variable: "STACKSAMPLER_FORMAT", option: "--format", noun: "a format",
        expected: "one of \(OutputFormat.allCases.map(\.rawValue).joined(separator: ", "))", parser: { OutputFormat(rawValue: $0) })
    /// The invocations file's format.
    package static let invocationFormat = Setting<InvocationFormat>(
        variable: "STACKSAMPLER_INVOCATION_FORMAT", option: "--invocation-format", noun: "an invocation format",
        expected: "chrome, speedscope or spans", default: .chrome, parser: { InvocationFormat(rawValue: $0) })
    /// Invocations seen in fewer samples are not kept.
    @usableFromInline
    package static let invocationMinSamples = Setting<Int>(
        variable: "STACKSAMPLER_INVOCATION_MIN_SAMPLES", option: "--invocation-min-samples", noun: "a number of samples",
        kind: "a whole number", in: 1..., default: 2)
    /// Invocations kept in memory.
    @usableFromInline
    package static let invocationCapacity = Setting<Int>(
        variable: "STACKSAMPLER_INVOCATION_CAPACITY", option: "--invocation-capacity", noun: "a number of invocations",
        kind: "a whole number", in: 0..., default: 1_000_000)
    /// Invocations deeper than this are not kept.
    package static let invocationMaxDepth = Setting<Int>(
        variable: "STACKSAMPLER_INVOCATION_MAX_DEPTH", option: "--invocation-max-depth", noun: "a depth",
        kind: "a whole number", in: 1...)
    /// Invocations shorter than this are not kept.
    package static let invocationMinDuration = Setting<Duration>(
        variable: "STACKSAMPLER_INVOCATION_MIN_DURATION", option: "--invocation-min-duration", noun: "a duration",
        expected: "a number with a unit such as 250ms or 1s", parser: { try? PeriodParser.parse($0) })
    /// A call running longer than this is reported while it runs.
    package static let stallThreshold = Setting<Duration>(
        variable: "STACKSAMPLER_STALL_THRESHOLD", option: "--stall-threshold", noun: "a duration",
        expected: "a number with a unit such as 250ms or 1s", parser: { try? PeriodParser.parse($0) })

    /// Where profiles go: comma-separated files, `%p` for the pid (the preload profiles only with it).
    package static let output = Setting<String>(
        variable: "STACKSAMPLER_OUTPUT", option: "--output", noun: "a list of files", expected: "paths separated by commas", parser: { $0 })
    /// Where the session is streamed as it runs (a raw recording), `%p` for the pid.
    package static let raw = Setting<String>(
        variable: "STACKSAMPLER_RAW", option: "--raw", noun: "a file", expected: "a path", parser: { $0 })
    /// Where the summary goes: `-` for standard error, else a file.
    package static let summary = Setting<String>(
        variable: "STACKSAMPLER_SUMMARY", option: "--summary", noun: "a file", expected: "a path, or - for standard error", parser: { $0 })
    /// Where the invocations go, `%p` for the pid (`%t` a file per window in continuous mode); `1`: tracked, no file.
    package static let invocations = Setting<String>(
        variable: "STACKSAMPLER_INVOCATIONS", option: "--invocations", noun: "a file", expected: "a path, or 1 for no file", parser: { $0 })
    /// Continuous mode: where each window's calls table goes (`%p`, `%t`); JSON for a `.json` path, else text.
    package static let calls = Setting<String>(
        variable: "STACKSAMPLER_CALLS", option: "--calls", noun: "a file", expected: "a path (.json for JSON, else text)", parser: { $0 })
    /// Keep only invocations of functions whose name matches.
    package static let invocationFilter = Setting<String>(
        variable: "STACKSAMPLER_INVOCATION_FILTER", option: "--invocation-filter", noun: "a pattern",
        expected: "a glob with * and ?, else a substring", parser: { $0 })
    /// Where stall reports also go, `%p` for the pid.
    package static let stalls = Setting<String>(
        variable: "STACKSAMPLER_STALLS", option: "--stalls", noun: "a file", expected: "a path", parser: { $0 })

    // The daemon: continuous windows, the HTTP endpoints, pushes to a Pyroscope-compatible back end.

    /// Continuous mode: sampling never stops, and every window of this length becomes a profile.
    package static let continuous = Setting<Duration>(
        variable: "STACKSAMPLER_CONTINUOUS", option: "--continuous", noun: "a window length",
        examples: "a duration with a unit such as 60s, 10s or 500ms", in: .milliseconds(100)...(.seconds(3600)))
    /// Continuous mode with `%t` in the output: only the newest this many window files are kept.
    package static let keep = Setting<Int>(
        variable: "STACKSAMPLER_KEEP", option: "--keep", noun: "a number of files", kind: "a whole number", in: 1...)
    /// Where the HTTP endpoints listen: `HOST:PORT` (TCP), `unix:PATH`, or `unix` (the default
    /// per-process socket only, which the daemon always has).
    package static let listen = Setting<String>(
        variable: "STACKSAMPLER_LISTEN", option: "--listen", noun: "a listen address",
        expected: "HOST:PORT such as 127.0.0.1:6060 or [::1]:6060, unix:PATH, or unix", parser: { $0 },
        accepts: { !$0.isEmpty })
    /// The longest profile one HTTP request may ask for, in seconds.
    package static let maxRequestSeconds = Setting<Int>(
        variable: "STACKSAMPLER_MAX_REQUEST_SECONDS", option: "--max-request-seconds", noun: "a number of seconds",
        kind: "a whole number", in: 1...3600, default: 300)
    /// A Pyroscope-compatible back end every window is pushed to (`http://` or `https://`, its
    /// `/ingest` is appended).
    package static let push = Setting<String>(
        variable: "STACKSAMPLER_PUSH", option: "--push", noun: "a back end URL",
        expected: "an http:// or https:// URL such as http://127.0.0.1:4040", parser: { $0 },
        accepts: { $0.hasPrefix("http://") || $0.hasPrefix("https://") })
    /// The application name pushed, with labels: `svc{env=prod,region=eu}`.
    package static let appName = Setting<String>(
        variable: "STACKSAMPLER_APP_NAME", option: "--app-name", noun: "an application name",
        expected: "a name with optional labels such as svc{env=prod,region=eu}", parser: { $0 }, accepts: { !$0.isEmpty })
    /// The tenant sent as `X-Scope-OrgID` with every push.
    package static let pushTenant = Setting<String>(
        variable: "STACKSAMPLER_PUSH_TENANT", option: "--push-tenant", noun: "a tenant id", expected: "a tenant id", parser: { $0 })
    /// Basic authentication for pushes: `USER:PASSWORD`.
    package static let pushBasicAuth = Setting<String>(
        variable: "STACKSAMPLER_PUSH_BASIC_AUTH", option: "--push-basic-auth", noun: "a user and password",
        expected: "USER:PASSWORD", parser: { $0 }, accepts: { $0.contains(":") })
    /// A bearer token for pushes.
    package static let pushToken = Setting<String>(
        variable: "STACKSAMPLER_PUSH_TOKEN", option: "--push-token", noun: "a token", expected: "a bearer token", parser: { $0 })
    /// A file holding the push credentials (`USER:PASSWORD` for basic, else a bearer token), read at each push.
    package static let pushCredentialsFile = Setting<String>(
        variable: "STACKSAMPLER_PUSH_CREDENTIALS_FILE", option: "--push-credentials-file", noun: "a file",
        expected: "a path to a file holding USER:PASSWORD or a bearer token", parser: { $0 })
    /// Windows waiting to be pushed at most; more are dropped and counted.
    @usableFromInline
    package static let pushQueue = Setting<Int>(
        variable: "STACKSAMPLER_PUSH_QUEUE", option: "--push-queue", noun: "a queue length",
        kind: "a whole number", in: 1...1000, default: 8)

    // OTLP push: OpenTelemetry's own variables, read as its SDKs read them (only http/protobuf);
    // each exporter option also has a variable per signal, which overrides the general one.

    /// The collector's base URL; `/v1/traces` and `/v1development/profiles` are appended (each
    /// signal's own endpoint, when given, is used instead).
    package static let otlpEndpoint = Setting<String>(
        variable: "OTEL_EXPORTER_OTLP_ENDPOINT", option: "--otlp-endpoint", noun: "an OTLP/HTTP base URL",
        expected: "an http:// or https:// URL such as http://127.0.0.1:4318", parser: { $0 }, accepts: isHTTPURL)
    /// The full URL spans are posted to, instead of the base URL's `/v1/traces`.
    package static let otlpTracesEndpoint = Setting<String>(
        variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", option: "--otlp-traces-endpoint", noun: "an OTLP/HTTP traces URL",
        expected: "a full http:// or https:// URL such as http://127.0.0.1:4318/v1/traces", parser: { $0 }, accepts: isHTTPURL)
    /// The full URL profiles are posted to, instead of the base URL's `/v1development/profiles`.
    package static let otlpProfilesEndpoint = Setting<String>(
        variable: "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", option: "--otlp-profiles-endpoint", noun: "an OTLP/HTTP profiles URL",
        expected: "a full http:// or https:// URL such as http://127.0.0.1:4318/v1development/profiles", parser: { $0 },
        accepts: isHTTPURL)
    /// Headers sent with every OTLP request of a signal: `key=value,…`, percent-decoded.
    package static let otlpHeaders = OTLPSignalSetting<[(key: String, value: String)]>(
        name: "HEADERS", option: "headers", noun: "a list of headers",
        expected: "key=value pairs separated by commas, percent-encoded, such as api-key=secret,tenant=a%20b",
        parser: { KeyValueList.parse($0) })
    /// The OTLP transport: only `http/protobuf` is spoken.
    package static let otlpProtocol = OTLPSignalSetting<String>(
        name: "PROTOCOL", option: "protocol", noun: "a protocol the profiler speaks",
        expected: "http/protobuf, the only protocol the profiler speaks (not grpc or http/json; a collector's OTLP receiver takes http/protobuf on port 4318)",
        parser: { $0 }, accepts: { $0 == "http/protobuf" })
    /// The longest one OTLP request of a signal may take: milliseconds, 0 for no limit (OpenTelemetry's Timeout type).
    package static let otlpTimeout = OTLPSignalSetting<Duration>(
        name: "TIMEOUT", option: "timeout", noun: "a timeout",
        expected: "a whole number of milliseconds such as 10000 (0: no limit)", default: .seconds(10),
        parser: { text in Int(text).map { $0 == 0 ? .milliseconds(Int32.max) : .milliseconds($0) } },
        accepts: { $0 > .zero })
    /// How a signal's OTLP request bodies are compressed.
    package static let otlpCompression = OTLPSignalSetting<OTLPCompression>(
        name: "COMPRESSION", option: "compression", noun: "a compression", expected: "gzip or none", default: OTLPCompression.none,
        parser: { OTLPCompression(rawValue: $0) })
    /// The `service.name` resource attribute.
    package static let otelServiceName = Setting<String>(
        variable: "OTEL_SERVICE_NAME", option: "--otel-service-name", noun: "a service name", expected: "a non-empty name",
        parser: { $0 }, accepts: { !$0.isEmpty })
    /// More resource attributes: `key=value,…`, percent-decoded.
    package static let otelResourceAttributes = Setting<[(key: String, value: String)]>(
        variable: "OTEL_RESOURCE_ATTRIBUTES", option: "--otel-resource-attributes", noun: "a list of resource attributes",
        expected: "key=value pairs separated by commas, percent-encoded, such as deployment.environment.name=prod,team=a%2Cb",
        parser: { KeyValueList.parse($0) })
    /// `true` (any case) turns the OTLP push off, as it turns OpenTelemetry's SDKs off.
    package static let otelSDKDisabled = Setting<Bool>(
        variable: "OTEL_SDK_DISABLED", option: "--otel-sdk-disabled", noun: "a switch", expected: "true or false",
        parser: { switch $0.lowercased() { case "true": true; case "false", "": false; default: nil } })

    // Variables that set nothing of a session.

    /// Set by the preload library's constructor to the pid of the process it profiles, so that
    /// the programs that process starts, which inherit it, know they are not the owner.
    package static let ownerVariable = "STACKSAMPLER_OWNER_PID"
    /// `stacksampler record`: the preload library to use instead of the one beside the executable.
    package static let preloadLibraryVariable = "STACKSAMPLER_PRELOAD_LIBRARY"

    @Sendable private static func isHTTPURL(_ text: String) -> Bool {
        (text.hasPrefix("http://") || text.hasPrefix("https://")) && !text.contains(" ")
    }

    /// A switch: 1, true or yes; 0, false or no.
    @Sendable private static func switchValue(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes": true
        case "0", "false", "no", "": false
        default: nil
        }
    }
}
