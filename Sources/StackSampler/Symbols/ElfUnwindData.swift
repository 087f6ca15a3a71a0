import FileFormatLibraries

extension ElfFile {
    /// Function ranges from the unwind data: `.eh_frame` found by its section header, or, for
    /// files without section headers, through the `PT_GNU_EH_FRAME` segment (`.eh_frame_hdr`),
    /// whose `eh_frame_ptr` points at it.
    func functionRanges() -> FunctionRanges {
        let addressSize = isClass64 ? 8 : 4
        if let section = section(named: ".eh_frame"), section.header.sh_type != UInt32(SHT_NOBITS),  // PROGBITS, or X86_64_UNWIND from lld
           let data = libelf.elf_getdata(section.scn, nil), let buffer = data.pointee.d_buf {
            let bytes = UnsafeRawBufferPointer(start: buffer, count: data.pointee.d_size)
            let reader = ByteReader(bytes: bytes, baseAddress: section.header.sh_addr)
            return FunctionRanges(EhFrame.functionRanges(in: reader, addressSize: addressSize))
        }
        guard let ehFrameAddress = ehFrameAddressFromHeader(addressSize: addressSize),
              let segment = loadSegments.first(where: { $0.vaddr <= ehFrameAddress && ehFrameAddress - $0.vaddr < $0.fileSize }),
              let reader = reader(fileOffset: segment.fileOffset + (ehFrameAddress - segment.vaddr),
                                  count: Int(segment.fileSize - (ehFrameAddress - segment.vaddr)),
                                  vaddr: ehFrameAddress)
        else { return FunctionRanges() }
        // Without a section size the walk runs to the end of the segment and stops at what does not parse.
        return FunctionRanges(EhFrame.functionRanges(in: reader, addressSize: addressSize))
    }

    /// `eh_frame_ptr` of the `.eh_frame_hdr` that `PT_GNU_EH_FRAME` loads (version 1).
    private func ehFrameAddressFromHeader(addressSize: Int) -> UInt64? {
        guard let header = programHeaders.first(where: { $0.p_type == UInt32(PT_GNU_EH_FRAME) }),
              var reader = reader(fileOffset: header.p_offset, count: Int(header.p_filesz), vaddr: header.p_vaddr),
              reader.read(UInt8.self) == 1, let pointerEncoding = reader.read(UInt8.self),
              reader.skip(2)  // fde_count_enc, table_enc: the table itself is not needed.
        else { return nil }
        return reader.pointer(PointerEncoding(raw: pointerEncoding), addressSize: addressSize, dataBase: header.p_vaddr)
    }

    /// A reader over `count` bytes of the file at `fileOffset`, which load at `vaddr`; libelf
    /// owns the bytes for as long as this file is open.
    private func reader(fileOffset: UInt64, count: Int, vaddr: UInt64) -> ByteReader? {
        guard count > 0, let data = libelf.elf_getdata_rawchunk(elf, Int64(fileOffset), count, ELF_T_BYTE),
              let buffer = data.pointee.d_buf else { return nil }
        return ByteReader(bytes: UnsafeRawBufferPointer(start: buffer, count: data.pointee.d_size), baseAddress: vaddr)
    }
}
