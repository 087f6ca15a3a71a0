/// An OTLP attribute's value (common.proto's AnyValue, the kinds the profiler sends).
package enum OTLPValue: Sendable, Hashable {
    case string(String)
    case int(Int64)
    case bool(Bool)
}

/// One OTLP attribute (common.proto's KeyValue).
package struct OTLPAttribute: Sendable, Hashable {
    /// The attribute's name, as the semantic conventions spell it (`service.name`).
    package var key: String
    package var value: OTLPValue

    /// The attribute `key` = `value`.
    package init(_ key: String, _ value: OTLPValue) {
        self.key = key
        self.value = value
    }
}

/// What every OTLP request says of the process it comes from (resource.proto's Resource): its
/// attributes in order, each key once.
package struct OTLPResource: Sendable, Hashable {
    package private(set) var attributes: [OTLPAttribute] = []

    /// A resource with `attributes` (a later one replaces an earlier one of the same key).
    package init(_ attributes: [OTLPAttribute] = []) {
        for attribute in attributes { set(attribute) }
    }

    /// Sets `attribute`, replacing the one of the same key in place.
    package mutating func set(_ attribute: OTLPAttribute) {
        if let index = attributes.firstIndex(where: { $0.key == attribute.key }) {
            attributes[index] = attribute
        } else {
            attributes.append(attribute)
        }
    }

    /// The value of `key`, if set.
    package subscript(key: String) -> OTLPValue? { attributes.first { $0.key == key }?.value }
}

/// The instrumentation scope every request names, and the common messages' encoding.
enum OTLPEncoding {
    /// The scope's (and `telemetry.sdk.name`'s) name.
    static let scopeName = "stacksampler"

    /// Field numbers of common.proto and resource.proto.
    enum Field {
        enum AnyValue { static let string = 1, bool = 2, int = 3 }
        enum KeyValue { static let key = 1, value = 2 }
        enum Resource { static let attributes = 1 }
        enum Scope { static let name = 1 }
    }

    /// An AnyValue's fields.
    static func write(_ value: OTLPValue, to writer: inout ProtobufWriter) {
        switch value {
        case .string(let text): writer.string(Field.AnyValue.string, text)
        case .int(let number): writer.oneofInt(Field.AnyValue.int, number)
        case .bool(let flag): writer.oneofInt(Field.AnyValue.bool, flag ? 1 : 0)
        }
    }

    /// A KeyValue's fields.
    static func write(_ attribute: OTLPAttribute, to writer: inout ProtobufWriter) {
        writer.string(Field.KeyValue.key, attribute.key)
        writer.message(Field.KeyValue.value) { write(attribute.value, to: &$0) }
    }

    /// A Resource's fields.
    static func write(_ resource: OTLPResource, to writer: inout ProtobufWriter) {
        for attribute in resource.attributes { writer.message(Field.Resource.attributes) { write(attribute, to: &$0) } }
    }

    /// An InstrumentationScope's fields.
    static func writeScope(to writer: inout ProtobufWriter) {
        writer.string(Field.Scope.name, scopeName)
    }

    /// A 16-byte id (trace and profile ids), the same for the same `session` and `value`, never all
    /// zero (OTLP's invalid id): two rounds of SplitMix64's finalizer over them.
    static func identifier(session: UInt64, value: UInt64) -> [UInt8] {
        let high = mix(session ^ 0x9e37_79b9_7f4a_7c15), low = mix(high ^ value)
        return bigEndian(high == 0 && low == 0 ? 1 : high) + bigEndian(low)
    }

    /// `value`'s eight bytes, most significant first (a span id).
    static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9e37_79b9_7f4a_7c15
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
