/// Finds the separate debug file of a stripped module, where gdb looks for it: by build id
/// under the debug root, then by `.gnu_debuglink` name next to the module, in its `.debug/`
/// directory, and under the debug root. A candidate is used only if it is the module's: same
/// build id (when both have one), else the CRC-32 the debuglink records.
struct DebugFileLocator {
    /// The debug root, `/usr/lib/debug` unless configured.
    let root: String

    /// The debug file of `file`, loaded from `path`; nil if none is found or none matches.
    func debugFile(for file: ElfFile, path: String) -> ElfFile? {
        let buildID = file.buildID
        if let buildID, buildID.count > 2 {
            let candidate = "\(root)/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug"
            if let debug = ElfFile(path: candidate), debug.buildID == buildID { return debug }
        }
        guard let link = file.debugLink else { return nil }
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        for candidate in ["\(directory)/\(link.name)", "\(directory)/.debug/\(link.name)", "\(root)\(directory)/\(link.name)"]
        where candidate != path {
            guard let debug = ElfFile(path: candidate) else { continue }
            if let buildID, let debugID = debug.buildID {
                if buildID == debugID { return debug }
            } else if fileCRC32(candidate) == link.crc {
                return debug
            }
        }
        return nil
    }

    /// The CRC-32 of the whole file at `path`, nil if it cannot be read.
    private func fileCRC32(_ path: String) -> UInt32? {
        var crc: UInt32? = 0
        let read = FileIO.readChunks(of: path, chunkSize: 1 << 20) { chunk in
            crc = crc.flatMap { XZ.crc32(chunk, continuing: $0) }
            return crc != nil
        }
        return read ? crc : nil
    }
}

extension ElfFile {
    /// The `.gnu_debuglink` section: the debug file's name and the CRC-32 of its contents.
    var debugLink: (name: String, crc: UInt32)? {
        guard let section = section(named: ".gnu_debuglink"), let data = libelf.elf_getdata(section.scn, nil),
              let buffer = data.pointee.d_buf else { return nil }
        var reader = ByteReader(bytes: UnsafeRawBufferPointer(start: buffer, count: data.pointee.d_size), baseAddress: 0)
        guard let name = reader.cString(), !name.isEmpty, reader.skip((4 - reader.offset % 4) % 4),
              let crc = reader.read(UInt32.self) else { return nil }
        return (String(decoding: name, as: UTF8.self), crc)
    }

    /// The MiniDebugInfo of `.gnu_debugdata`: an xz-compressed ELF file holding a symbol table
    /// of the functions `.dynsym` lacks (Fedora and others ship it in stripped binaries).
    func miniDebugInfo() -> ElfFile? {
        guard let section = section(named: ".gnu_debugdata"), let data = libelf.elf_getdata(section.scn, nil),
              let buffer = data.pointee.d_buf,
              let image = XZ.decompress(UnsafeRawBufferPointer(start: buffer, count: data.pointee.d_size))
        else { return nil }
        return ElfFile(copying: image)
    }
}
