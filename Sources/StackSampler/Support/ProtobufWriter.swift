/// Encodes protocol buffer messages field by field (wire format only, no schema), for pprof and
/// OTLP. Fields are written in call order; nested messages through `message(_:_:)`.
package struct ProtobufWriter {
    /// The encoded bytes so far.
    package private(set) var bytes: [UInt8] = []

    private enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    /// An empty message.
    package init() {}

    /// An unsigned integer field (uint64, or a bool as 0/1); zero values are left out, as proto3 does.
    package mutating func uint(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .varint)
        varint(value)
    }

    /// A signed integer field (int64: negative values take ten bytes); zero values are left out.
    package mutating func int(_ field: Int, _ value: Int64) {
        uint(field, UInt64(bitPattern: value))
    }

    /// A signed integer field written even when zero: a member of a oneof, whose presence says which is set.
    package mutating func oneofInt(_ field: Int, _ value: Int64) {
        tag(field, .varint)
        varint(UInt64(bitPattern: value))
    }

    /// A string field (always written: in pprof's string table the empty string is entry 0).
    package mutating func string(_ field: Int, _ value: String) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// A packed repeated integer field; nothing for an empty list.
    package mutating func packed(_ field: Int, _ values: [UInt64]) {
        guard !values.isEmpty else { return }
        var body = ProtobufWriter()
        for value in values { body.varint(value) }
        tag(field, .lengthDelimited)
        varint(UInt64(body.bytes.count))
        bytes.append(contentsOf: body.bytes)
    }

    /// An embedded message field whose fields `write` adds.
    package mutating func message(_ field: Int, _ write: (inout ProtobufWriter) -> Void) {
        var body = ProtobufWriter()
        write(&body)
        tag(field, .lengthDelimited)
        varint(UInt64(body.bytes.count))
        bytes.append(contentsOf: body.bytes)
    }

    /// An embedded message field already encoded in `body`.
    package mutating func message(_ field: Int, encoded body: ProtobufWriter) {
        tag(field, .lengthDelimited)
        varint(UInt64(body.bytes.count))
        bytes.append(contentsOf: body.bytes)
    }

    /// A fixed64 field (OTLP's timestamps); zero values are left out.
    package mutating func fixed64(_ field: Int, _ value: UInt64) {
        guard value != 0 else { return }
        tag(field, .fixed64)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A bytes field (OTLP's trace and span ids); nothing for an empty value.
    package mutating func byteString(_ field: Int, _ value: [UInt8]) {
        guard !value.isEmpty else { return }
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    private mutating func tag(_ field: Int, _ type: WireType) {
        varint(UInt64(field) << 3 | type.rawValue)
    }

    private mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }
}
