/// A bounds-checked cursor over little-endian bytes loaded at a known ELF virtual address
/// (a section's contents), for the DWARF-style encodings of unwind data. Every read returns
/// nil instead of running past the end.
struct ByteReader {
    /// The bytes; the caller keeps them alive while the reader is used.
    let bytes: UnsafeRawBufferPointer
    /// ELF virtual address of `bytes[0]`.
    let baseAddress: UInt64
    /// Position of the next read.
    var offset = 0

    /// ELF virtual address of the next byte, the base of `DW_EH_PE_pcrel` pointers.
    var address: UInt64 { baseAddress &+ UInt64(offset) }

    /// Bytes left after `offset`.
    var remaining: Int { max(0, bytes.count - offset) }

    /// Reads a fixed-size little-endian integer.
    mutating func read<Value: FixedWidthInteger>(_: Value.Type) -> Value? {
        let size = MemoryLayout<Value>.size
        guard offset >= 0, remaining >= size else { return nil }
        let value = Value(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Value.self))
        offset += size
        return value
    }

    /// Reads an unsigned LEB128 number (at most 64 significant bits).
    mutating func uleb128() -> UInt64? {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = read(UInt8.self) {
            if shift < 64 { result |= UInt64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 { return result }
        }
        return nil
    }

    /// Reads a signed LEB128 number.
    mutating func sleb128() -> Int64? {
        var result: Int64 = 0
        var shift: Int64 = 0
        while let byte = read(UInt8.self) {
            if shift < 64 { result |= Int64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 {
                if shift < 64, byte & 0x40 != 0 { result |= -1 << shift }
                return result
            }
        }
        return nil
    }

    /// Reads a NUL-terminated byte string, without the NUL.
    mutating func cString() -> [UInt8]? {
        guard offset >= 0, offset < bytes.count else { return nil }
        let tail = bytes[offset...]
        guard let end = tail.firstIndex(of: 0) else { return nil }
        let result = Array(bytes[offset..<end])
        offset = end + 1
        return result
    }

    /// Moves `count` bytes forward; false if that passes the end.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }
}
