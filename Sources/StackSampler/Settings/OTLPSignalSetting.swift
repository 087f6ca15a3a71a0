/// A signal OpenTelemetry's exporter sends: the profiler pushes spans and profiles.
package enum OTLPSignal: String, Sendable, CaseIterable {
    /// Spans: the reconstructed calls.
    case traces
    /// Profiles: each window's samples.
    case profiles
}

/// How OTLP request bodies are compressed (`OTEL_EXPORTER_OTLP_COMPRESSION`).
package enum OTLPCompression: String, Sendable {
    /// Sent as encoded.
    case none
    /// gzip, said by `Content-Encoding: gzip`.
    case gzip
}

/// One OTLP exporter option as OpenTelemetry's variables spell it: a general variable
/// (`OTEL_EXPORTER_OTLP_TIMEOUT`) and one per signal (`OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`,
/// `OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT`), which, when given, overrides the general one for its
/// signal (the OTLP exporter specification: "each configuration option MUST be overridable by a
/// signal specific option").
package struct OTLPSignalSetting<Value: Sendable>: Sendable {
    /// The variable for every signal.
    package let general: Setting<Value>
    private let traces: Setting<Value>
    private let profiles: Setting<Value>

    /// The settings `OTEL_EXPORTER_OTLP_<name>` and `OTEL_EXPORTER_OTLP_<SIGNAL>_<name>`, whose
    /// `record` options are `--otlp-<option>` and `--otlp-<signal>-<option>`.
    init(name: String, option: String, noun: String, expected: String, default defaultValue: Value? = nil,
         parser: @escaping @Sendable (String) -> Value?, accepts: @escaping @Sendable (Value) -> Bool = { _ in true }) {
        func setting(_ infix: String, _ optionInfix: String) -> Setting<Value> {
            Setting(variable: "OTEL_EXPORTER_OTLP_\(infix)\(name)", option: "--otlp-\(optionInfix)\(option)", noun: noun, expected: expected,
                    default: defaultValue, parser: parser, accepts: accepts)
        }
        general = setting("", "")
        traces = setting("TRACES_", "traces-")
        profiles = setting("PROFILES_", "profiles-")
    }

    /// The variable of `signal` alone.
    package func setting(for signal: OTLPSignal) -> Setting<Value> {
        switch signal {
        case .traces: traces
        case .profiles: profiles
        }
    }
}
