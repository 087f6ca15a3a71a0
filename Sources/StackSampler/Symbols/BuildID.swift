import FileFormatLibraries

extension ElfFile {
    /// The `NT_GNU_BUILD_ID` note as lowercase hex, from a `PT_NOTE` segment or else an
    /// `SHT_NOTE` section; nil if the file has none.
    var buildID: String? {
        for header in programHeaders where header.p_type == UInt32(PT_NOTE) {
            let noteType = header.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR
            if let data = libelf.elf_getdata_rawchunk(elf, Int64(header.p_offset), Int(header.p_filesz), noteType),
               let id = buildID(inNotes: data) {
                return id
            }
        }
        for section in sections where section.header.sh_type == UInt32(SHT_NOTE) {
            if let data = libelf.elf_getdata(section.scn, nil), let id = buildID(inNotes: data) { return id }
        }
        return nil
    }

    /// Walks the notes in `data` and returns the first GNU build-id as hex.
    private func buildID(inNotes data: UnsafeMutablePointer<Elf_Data>) -> String? {
        guard let base = data.pointee.d_buf?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var offset = 0
        while true {
            var note = GElf_Nhdr()
            var nameOffset = 0
            var descOffset = 0
            let next = libelf.gelf_getnote(data, offset, &note, &nameOffset, &descOffset)
            if next == 0 { return nil }
            offset = next
            guard note.n_type == UInt32(NT_GNU_BUILD_ID), note.n_namesz == 4, note.n_descsz > 0 else { continue }
            let name = UnsafeBufferPointer(start: base + nameOffset, count: 4)
            guard name.elementsEqual("GNU\0".utf8) else { continue }
            return hexString(UnsafeBufferPointer(start: base + descOffset, count: Int(note.n_descsz)))
        }
    }
}

/// Lowercase hex of `bytes`.
func hexString<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    for byte in bytes {
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0xf)])
    }
    return String(decoding: text, as: UTF8.self)
}
