/// A `DW_EH_PE_*` pointer encoding byte of `.eh_frame` / `.eh_frame_hdr` (LSB "Exception Frames"):
/// the low nibble is the value's format, bits 4–6 what it is relative to, bit 7 indirection.
struct PointerEncoding: Equatable {
    /// The encoding byte.
    var raw: UInt8

    /// `DW_EH_PE_omit`: no value present.
    static let omit = PointerEncoding(raw: 0xff)
    /// `DW_EH_PE_absptr`: a native-size absolute address, the default for FDEs.
    static let absolute = PointerEncoding(raw: 0x00)

    /// The same format, applied to nothing: how an FDE's address range length is encoded.
    var formatOnly: PointerEncoding { PointerEncoding(raw: raw & 0x0f) }
}

extension ByteReader {
    /// Reads a pointer encoded as `encoding` and returns the address it denotes.
    /// `dataBase` is the base of `DW_EH_PE_datarel` (the `.eh_frame_hdr` start; unknown, so
    /// unsupported, in `.eh_frame`). Text- and function-relative, aligned and indirect
    /// pointers are not used for code ranges on Linux and yield nil.
    mutating func pointer(_ encoding: PointerEncoding, addressSize: Int, dataBase: UInt64? = nil) -> UInt64? {
        guard encoding != .omit, encoding.raw & 0x80 == 0 else { return nil }
        let fieldAddress = address
        let value: UInt64?
        switch encoding.raw & 0x0f {
        case 0x00: value = addressSize == 4 ? read(UInt32.self).map(UInt64.init) : read(UInt64.self)
        case 0x01: value = uleb128()
        case 0x02: value = read(UInt16.self).map(UInt64.init)
        case 0x03: value = read(UInt32.self).map(UInt64.init)
        case 0x04: value = read(UInt64.self)
        case 0x09: value = sleb128().map { UInt64(bitPattern: $0) }
        case 0x0a: value = read(Int16.self).map { UInt64(bitPattern: Int64($0)) }
        case 0x0b: value = read(Int32.self).map { UInt64(bitPattern: Int64($0)) }
        case 0x0c: value = read(Int64.self).map { UInt64(bitPattern: $0) }
        default: return nil
        }
        guard let value else { return nil }
        switch encoding.raw & 0x70 {
        case 0x00: return value
        case 0x10: return fieldAddress &+ value
        case 0x30: return dataBase.map { $0 &+ value }
        default: return nil
        }
    }
}
