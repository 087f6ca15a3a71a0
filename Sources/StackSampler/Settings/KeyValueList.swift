/// OpenTelemetry's `key1=value1,key2=value2` lists (OTEL_RESOURCE_ATTRIBUTES,
/// OTEL_EXPORTER_OTLP_HEADERS): entries split at `,`, key and value at the first `=`, spaces
/// around each trimmed, both percent-decoded (`%2C` is a comma inside a value).
package enum KeyValueList {
    /// The entries of `text` in order (empty entries skipped); nil when an entry has no `=`, an empty
    /// key, or a bad percent escape.
    package static func parse(_ text: String) -> [(key: String, value: String)]? {
        var entries: [(key: String, value: String)] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard !entry.allSatisfy({ $0 == " " || $0 == "\t" }) else { continue }
            guard let equals = entry.firstIndex(of: "="),
                  let key = percentDecoded(trimmed(entry[..<equals])), !key.isEmpty,
                  let value = percentDecoded(trimmed(entry[entry.index(after: equals)...])) else { return nil }
            entries.append((key, value))
        }
        return entries
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }

    /// `text` with its `%XX` escapes decoded; nil for a bad escape or invalid UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
