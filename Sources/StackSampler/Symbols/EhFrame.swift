/// Reads function boundaries out of `.eh_frame` (the LSB format gcc and ld emit): each FDE
/// covers one function, or one cold part of it, `[pc_begin, pc_begin + pc_range)`. Stripping
/// keeps this section, because the unwinder needs it, so it bounds functions that have no symbol.
enum EhFrame {
    /// The ranges of every FDE in `section`, in section order; empty ranges are left out.
    /// Entries that do not parse end the walk (what came before is kept).
    static func functionRanges(in section: ByteReader, addressSize: Int) -> [Range<UInt64>] {
        var reader = section
        var fdeEncodings: [Int: PointerEncoding?] = [:]  // CIE offset -> its FDE pointer encoding
        var ranges: [Range<UInt64>] = []
        while reader.remaining >= 4 {
            guard var length = reader.read(UInt32.self).map(UInt64.init) else { break }
            if length == 0 { continue }  // A terminator; ld may leave several, keep walking.
            var idSize = 4
            if length == 0xffff_ffff {
                guard let length64 = reader.read(UInt64.self) else { break }
                length = length64
                idSize = 8
            }
            let bodyStart = reader.offset
            guard length <= UInt64(reader.remaining) else { break }
            let next = bodyStart + Int(length)
            let id = idSize == 4 ? reader.read(UInt32.self).map(UInt64.init) : reader.read(UInt64.self)
            guard let id else { break }
            if id != 0 {  // An FDE; its CIE pointer counts back from the pointer field itself.
                let cieOffset = bodyStart - Int(truncatingIfNeeded: id)
                let encoding: PointerEncoding?
                if let known = fdeEncodings[cieOffset] {
                    encoding = known
                } else {
                    encoding = fdePointerEncoding(cieAt: cieOffset, in: section, addressSize: addressSize)
                    fdeEncodings[cieOffset] = .some(encoding)
                }
                if let encoding, let begin = reader.pointer(encoding, addressSize: addressSize),
                   let length = reader.pointer(encoding.formatOnly, addressSize: addressSize),
                   length > 0, begin != 0, begin &+ length > begin {
                    ranges.append(begin..<begin + length)
                }
            }
            reader.offset = next
        }
        return ranges
    }

    /// The encoding of FDE addresses declared by the CIE at `offset` (augmentation `R`), or nil
    /// if that is not a CIE this parser understands.
    static func fdePointerEncoding(cieAt offset: Int, in section: ByteReader, addressSize: Int) -> PointerEncoding? {
        var reader = section
        reader.offset = offset
        guard offset >= 0, var length = reader.read(UInt32.self).map(UInt64.init), length != 0 else { return nil }
        var id: UInt64?
        if length == 0xffff_ffff {
            guard let length64 = reader.read(UInt64.self) else { return nil }
            length = length64
            id = reader.read(UInt64.self)
        } else {
            id = reader.read(UInt32.self).map(UInt64.init)
        }
        guard id == 0, let version = reader.read(UInt8.self), [1, 3, 4].contains(version),
              let augmentation = reader.cString() else { return nil }
        if version == 4 {  // DWARF 4 CIEs carry address and segment selector sizes.
            guard reader.skip(2) else { return nil }
        }
        if augmentation.starts(with: Array("eh".utf8)) {  // Old gcc: a pointer to exception tables.
            guard reader.skip(addressSize) else { return nil }
        }
        guard reader.uleb128() != nil /* code alignment */, reader.sleb128() != nil /* data alignment */ else { return nil }
        guard (version == 1 ? reader.read(UInt8.self).map(UInt64.init) : reader.uleb128()) != nil else { return nil }
        guard augmentation.first == UInt8(ascii: "z") else {
            return augmentation.isEmpty || augmentation == Array("eh".utf8) ? .absolute : nil
        }
        guard reader.uleb128() != nil /* augmentation data length */ else { return nil }
        var encoding = PointerEncoding.absolute
        for letter in augmentation.dropFirst() {
            switch letter {
            case UInt8(ascii: "R"):
                guard let raw = reader.read(UInt8.self) else { return nil }
                encoding = PointerEncoding(raw: raw)
            case UInt8(ascii: "P"):  // Personality routine: its encoding, then the pointer.
                guard let raw = reader.read(UInt8.self) else { return nil }
                let personality = PointerEncoding(raw: raw)
                // Indirect or data-relative personalities cannot be resolved here; only the size matters.
                guard reader.pointer(PointerEncoding(raw: personality.raw & 0x0f), addressSize: addressSize) != nil
                else { return nil }
            case UInt8(ascii: "L"):  // LSDA encoding; the pointer itself is in each FDE.
                guard reader.skip(1) else { return nil }
            case UInt8(ascii: "S"), UInt8(ascii: "B"), UInt8(ascii: "G"):
                continue
            default:
                // Unknown letters: their data is counted in the length read above, but we cannot
                // know whether `R` follows, so stop with what we have.
                return encoding
            }
        }
        return encoding
    }
}
