/// The raw recording: what a profiled process streams while it runs, so that a
/// profile can still be made if it is killed, and symbolized later elsewhere.
///
/// A file is the 8-byte magic `STKSMPL1`, then records. A record is
/// `kind (u8) · length (u32) · payload · crc32 (u32)`, all little-endian, the
/// CRC over kind, length and payload. Payloads:
/// - `header`: version u16, mode u8, period ns u64, max depth u32, pid i32, start ns u64, process name,
///   signal u16, signal substituted u8
/// - `modules`: /proc/self/maps text, count u32, then per module: path, build id (empty if none)
/// - `thread`: thread index u32, tid i32, name, CPU ns u64, first seen ns u64, last seen ns u64
/// - `stack`: stack id u32, thread index u32, flags u8 (0 = whole; else one `Profile.StackCut`: 1 cut at the maximum depth,
///   2 no unwind info, 4 leaf only, 8 unwind fault), depth u16, addresses u64 × depth (leaf first)
/// - `samples`: count u32, then per sample: stack id u32, time ns u64
/// - `counters`: dropped, truncated, leaf-only, unwind failures, unwind faults, late ticks, foreign signals,
///   timer overrun periods (u64 each)
/// - `end`: duration ns u64 (only when the process stopped profiling normally)
/// Strings are a u32 byte count and UTF-8 bytes.
enum RawFormat {
    /// First bytes of every raw file.
    static let magic: [UInt8] = Array("STKSMPL1".utf8)
    /// Version written in the header.
    static let version: UInt16 = 1
    /// The largest payload a reader accepts.
    static let maximumPayload = 64 << 20

    /// Record kinds.
    enum Kind: UInt8 {
        case header = 1, modules, thread, stack, samples, counters, end
    }
}

/// CRC-32 (IEEE 802.3, as zlib's crc32), to tell a damaged record from a good one.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// The CRC of `bytes`.
    static func checksum<C: Collection>(_ bytes: C) -> UInt32 where C.Element == UInt8 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
