/// Appends little-endian fields and whole records to a byte buffer.
struct RawEncoder {
    /// The bytes so far.
    var bytes: [UInt8] = []

    /// Appends a complete record: kind, length, payload and CRC.
    mutating func record(_ kind: RawFormat.Kind, _ payload: (inout RawEncoder) -> Void) {
        var body = RawEncoder()
        payload(&body)
        var framed = RawEncoder()
        framed.u8(kind.rawValue)
        framed.u32(UInt32(body.bytes.count))
        framed.bytes += body.bytes
        let crc = CRC32.checksum(framed.bytes)
        bytes += framed.bytes
        u32(crc)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { little(UInt64(value), count: 2) }
    mutating func u32(_ value: UInt32) { little(UInt64(value), count: 4) }
    mutating func u64(_ value: UInt64) { little(value, count: 8) }
    mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }

    /// A u32 byte count and the UTF-8 bytes.
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        u32(UInt32(utf8.count))
        bytes += utf8
    }

    private mutating func little(_ value: UInt64, count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
