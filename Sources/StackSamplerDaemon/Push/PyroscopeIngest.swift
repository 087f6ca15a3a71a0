import StackSampler

// Pyroscope's ingest API (the "legacy HTTP API" of Grafana Pyroscope, also served by Grafana
// Alloy's pyroscope.receive_http): `POST /ingest?name=…&from=…&until=…&format=pprof&…`.
//
// The body: with `format=pprof` the server reads the request body as the pprof itself (gzip or
// plain profile.proto), whatever the Content-Type (pkg/ingester/pyroscope/ingest_handler.go,
// readInputRawDataFromRequest: the `format == "pprof"` case comes before the multipart one, and
// it does not keep the Content-Type). A multipart/form-data body (`profile` part, optional
// `sample_type_config`) is parsed only when `format` names no known format; sent with
// `format=pprof` it would be read as a broken profile. So the window's pprof goes as the body
// itself, `application/octet-stream`. No sample type configuration is needed: the server names
// the series `process_cpu` from our `cpu` sample type, and `wall` from the `wall` one.

/// An application name with labels, as Pyroscope's `name` parameter takes it:
/// `svc{env=prod,region=eu}`. Checked by Pyroscope's rules (labelset.Parse), so that a name the
/// server would refuse (with a 400 on every push) is refused at start instead.
package struct PyroscopeAppName: Sendable, Equatable, CustomStringConvertible {
    /// The service name: letters, digits, `_`, `.`, `-` and `/`.
    package var service: String
    /// The labels in their given order: names of letters, digits, `_` and `.`; values without `,`, `{` or `}`.
    package var labels: [(name: String, value: String)]

    /// The name as sent: `service{name=value,…}`, `service{}` without labels.
    package var description: String {
        "\(service){\(labels.map { "\($0.name)=\($0.value)" }.joined(separator: ","))}"
    }

    package static func == (left: PyroscopeAppName, right: PyroscopeAppName) -> Bool {
        left.service == right.service && left.labels.map(\.name) == right.labels.map(\.name)
            && left.labels.map(\.value) == right.labels.map(\.value)
    }

    /// A name of `service` (not checked) and `labels`.
    package init(service: String, labels: [(name: String, value: String)] = []) {
        self.service = service
        self.labels = labels
    }

    /// Parses `svc` or `svc{env=prod,region=eu}`; the error says what is wrong.
    package init(parsing given: String) throws(PushError) {
        let text = given.trimmingSpaces
        let brace = text.firstIndex(of: "{")
        service = String(text[..<(brace ?? text.endIndex)]).trimmingSpaces
        labels = []
        guard !service.isEmpty else { throw .invalid("the application name \"\(text)\" has no service name before its labels") }
        if let bad = service.unicodeScalars.first(where: { !Self.isServiceCharacter($0) }) {
            throw .invalid("the application name \"\(text)\" has \"\(bad)\" in its service name; use letters, digits, _ . - and /")
        }
        guard let brace else { return }
        guard text.hasSuffix("}") else { throw .invalid("the application name \"\(text)\" does not end its labels with }") }
        let inside = text[text.index(after: brace)..<text.index(before: text.endIndex)]
        for pair in inside.split(separator: ",", omittingEmptySubsequences: true) {
            guard let equals = pair.firstIndex(of: "=") else {
                throw .invalid("the label \"\(pair)\" in \"\(text)\" has no value; write name=value")
            }
            let name = String(pair[..<equals]).trimmingSpaces
            let value = String(pair[pair.index(after: equals)...]).trimmingSpaces
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isLabelCharacter), name != "__name__" else {
                throw .invalid("the label name \"\(name)\" in \"\(text)\" is not allowed; use letters, digits, _ and . (not __name__)")
            }
            guard !value.contains("{") && !value.contains("}") else {
                throw .invalid("the label value \"\(value)\" in \"\(text)\" has a brace")
            }
            labels.append((name, value))
        }
    }

    /// `name` made acceptable as a service name: other characters become `_` (empty: `unknown`).
    package static func sanitizedService(_ name: String) -> String {
        let scalars = name.unicodeScalars.map { isServiceCharacter($0) ? Character($0) : "_" }
        return scalars.isEmpty ? "unknown" : String(scalars)
    }

    private static func isLabelCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "."
    }

    private static func isServiceCharacter(_ scalar: Unicode.Scalar) -> Bool {
        isLabelCharacter(scalar) || scalar == "-" || scalar == "/"
    }
}

/// How a window becomes an `/ingest` request.
package enum PyroscopeIngest {
    /// The `spyName` sent: Pyroscope shows it as the `pyroscope_spy` label.
    package static let spyName = "stacksampler"

    /// The query of a window's push, in the order Pyroscope documents the parameters:
    /// `name`, `from` and `until` (Unix seconds: the window's start, rounded down, and its end,
    /// rounded up, so that a window of under a second still spans one), `format=pprof`,
    /// `sampleRate` (samples per second per thread: 1 s over the period, when the period is
    /// known), `spyName`. Every value percent-encoded.
    package static func query(name: PyroscopeAppName, realtimeStartNanoseconds: UInt64, durationNanoseconds: UInt64,
                             period: Duration?) -> String {
        let from = realtimeStartNanoseconds / 1_000_000_000
        let end = realtimeStartNanoseconds &+ durationNanoseconds
        let until = max(from + 1, (end + 999_999_999) / 1_000_000_000)
        var parameters: [(String, String)] = [("name", name.description), ("from", String(from)), ("until", String(until)),
                                              ("format", "pprof")]
        if let period, period > .zero {
            let nanoseconds = Double(period.components.seconds) * 1e9 + Double(period.components.attoseconds) / 1e9
            // Pyroscope reads an integer (strconv.Atoi).
            parameters.append(("sampleRate", String(max(1, Int((1e9 / nanoseconds).rounded())))))
        }
        parameters.append(("spyName", spyName))
        return parameters.map { "\($0.0)=\(percentEncoded($0.1))" }.joined(separator: "&")
    }

    /// The full request of one window: `POST BASE/ingest?QUERY` with the pprof as its body.
    /// `base` is the back end's URL as configured (a trailing `/` is dropped).
    package static func request(base: String, name: PyroscopeAppName, profile: Profile, pprof: [UInt8],
                               headers: [(name: String, value: String)], timeoutMilliseconds: Int) -> HTTPClientRequest {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        let query = query(name: name, realtimeStartNanoseconds: profile.realtimeStartNanoseconds,
                          durationNanoseconds: profile.durationNanoseconds, period: profile.configuration?.period)
        let fields = [("Content-Type", "application/octet-stream"), ("User-Agent", "stacksampler")] + headers
        return HTTPClientRequest(method: .post, url: "\(base)/ingest?\(query)", headers: fields.map { (name: $0.0, value: $0.1) },
                           body: pprof, connectTimeoutMilliseconds: min(timeoutMilliseconds, 5000),
                           totalTimeoutMilliseconds: timeoutMilliseconds, maxResponseBytes: 1 << 20)
    }

    /// `text` percent-encoded for a query value: everything but letters, digits and `-._~` (RFC 3986 unreserved).
    package static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Base64 (RFC 4648, with padding), for basic authentication.
enum Base64 {
    /// `bytes` encoded.
    static func encoded(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                output.append(position <= chunk.count ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 63)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line ends.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
