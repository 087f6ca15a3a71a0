/// Why a raw recording cannot be read, and where.
package struct RawFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset in the file where the problem starts.
    package var offset: Int
    /// What is wrong there.
    package var problem: String

    package var description: String {
        "not a usable StackSampler recording: \(problem) at byte \(offset); record the program again, or pass a file written by STACKSAMPLER_RAW"
    }
}

/// Reads little-endian fields from a payload, checking every bound.
struct RawDecoder {
    private let bytes: ArraySlice<UInt8>
    private var position: Int
    /// Offset of `bytes.startIndex` in the file, for error messages.
    private let base: Int

    init(_ bytes: ArraySlice<UInt8>, fileOffset: Int) {
        self.bytes = bytes
        self.position = bytes.startIndex
        self.base = fileOffset - bytes.startIndex
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == bytes.endIndex }
    /// Bytes left.
    var remaining: Int { bytes.endIndex - position }

    /// An error at the current position.
    func error(_ problem: String) -> RawFormatError {
        RawFormatError(offset: base + position, problem: problem)
    }

    mutating func u8() throws(RawFormatError) -> UInt8 { UInt8(try little(1)) }
    mutating func u16() throws(RawFormatError) -> UInt16 { UInt16(try little(2)) }
    mutating func u32() throws(RawFormatError) -> UInt32 { UInt32(try little(4)) }
    mutating func u64() throws(RawFormatError) -> UInt64 { try little(8) }
    mutating func i32() throws(RawFormatError) -> Int32 { Int32(bitPattern: try u32()) }

    /// A u32 byte count and that many UTF-8 bytes.
    mutating func string() throws(RawFormatError) -> String {
        let count = Int(try u32())
        guard count <= remaining else { throw error("a string of \(count) bytes runs past its record") }
        defer { position += count }
        return String(decoding: bytes[position..<position + count], as: UTF8.self)
    }

    private mutating func little(_ count: Int) throws(RawFormatError) -> UInt64 {
        guard count <= remaining else { throw error("the record ends inside a \(count)-byte field") }
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += count
        return value
    }
}
