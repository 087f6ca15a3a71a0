import FileFormatLibraries
import Glibc

/// A `PT_LOAD` program header: the file range `[fileOffset, fileOffset + fileSize)` is loaded at `vaddr`.
struct LoadSegment: Sendable, Equatable {
    var fileOffset: UInt64
    var fileSize: UInt64
    var vaddr: UInt64
}

/// An ELF file opened read-only through libelf. Data is read on demand with `pread`
/// (`ELF_C_READ`, not an mmap), so a file truncated behind our back yields an error, not SIGBUS.
/// It can also wrap an ELF image already in memory (the vDSO), or a copy it owns (decompressed data).
/// The descriptor and libelf handle are released on deinit; use it briefly and drop it. (The
/// descriptor is closed only if it still holds the file: see `OwnedDescriptor`.)
final class ElfFile {
    /// libelf's functions (loaded on first use); every ElfFile has them.
    let libelf: ss_libelf
    let elf: OpaquePointer
    /// The open file, nil for an in-memory image.
    private let file: OwnedDescriptor?
    /// The image this file owns and frees, if it was made from a copy.
    private let ownedImage: UnsafeMutableRawBufferPointer?
    /// `e_type`: `ET_EXEC`, `ET_DYN`, ...
    let type: UInt16
    /// True for ELFCLASS64 (8-byte addresses), false for ELFCLASS32.
    let isClass64: Bool

    /// Opens `path`, or returns nil if it is unreadable or not ELF.
    convenience init?(path: String) {
        guard let libelf = Self.loadedLibelf else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        let file = OwnedDescriptor(fd)
        guard let elf = libelf.elf_begin(fd, ELF_C_READ, nil) else { return nil }
        self.init(libelf: libelf, elf: elf, file: file)
    }

    /// Wraps a complete ELF image mapped readable in this process (libelf only reads it).
    convenience init?(image: UnsafeRawBufferPointer) {
        guard let libelf = Self.loadedLibelf, let base = image.baseAddress,
              let elf = libelf.elf_memory(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self)), image.count)
        else { return nil }
        self.init(libelf: libelf, elf: elf, file: nil)
    }

    /// Wraps a copy of the ELF image `bytes`, kept for the file's lifetime.
    convenience init?(copying bytes: [UInt8]) {
        let image = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 16)
        bytes.withUnsafeBytes { image.copyMemory(from: $0) }
        guard let libelf = Self.loadedLibelf,
              let elf = libelf.elf_memory(image.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count) else {
            image.deallocate()
            return nil
        }
        self.init(libelf: libelf, elf: elf, file: nil, ownedImage: image)
    }

    /// libelf, loaded privately on first use and set up for this ELF version; nil if it cannot be.
    private static var loadedLibelf: ss_libelf? {
        guard let libelf = ss_libelf_load()?.pointee, libelf.elf_version(UInt32(EV_CURRENT)) != UInt32(EV_NONE) else { return nil }
        return libelf
    }

    private init?(libelf: ss_libelf, elf: OpaquePointer, file: OwnedDescriptor?, ownedImage: UnsafeMutableRawBufferPointer? = nil) {
        var header = GElf_Ehdr()
        guard libelf.elf_kind(elf) == ELF_K_ELF, libelf.gelf_getehdr(elf, &header) != nil else {
            _ = libelf.elf_end(elf)
            ownedImage?.deallocate()
            return nil
        }
        self.libelf = libelf
        self.elf = elf
        self.file = file
        self.ownedImage = ownedImage
        self.type = header.e_type
        self.isClass64 = libelf.gelf_getclass(elf) == ELFCLASS64
    }

    deinit {
        _ = libelf.elf_end(elf)
        ownedImage?.deallocate()
    }

    /// All program headers.
    var programHeaders: [GElf_Phdr] {
        var count = 0
        guard libelf.elf_getphdrnum(elf, &count) == 0 else { return [] }
        var headers: [GElf_Phdr] = []
        headers.reserveCapacity(count)
        for index in 0..<count {
            var header = GElf_Phdr()
            if libelf.gelf_getphdr(elf, Int32(index), &header) != nil { headers.append(header) }
        }
        return headers
    }

    /// The `PT_LOAD` segments, in file order.
    var loadSegments: [LoadSegment] {
        programHeaders.filter { $0.p_type == UInt32(PT_LOAD) }.map {
            LoadSegment(fileOffset: $0.p_offset, fileSize: $0.p_filesz, vaddr: $0.p_vaddr)
        }
    }

    /// All sections with their headers, in index order.
    var sections: [(scn: OpaquePointer, header: GElf_Shdr)] {
        var result: [(scn: OpaquePointer, header: GElf_Shdr)] = []
        var scn = libelf.elf_nextscn(elf, nil)
        while let current = scn {
            var header = GElf_Shdr()
            if libelf.gelf_getshdr(current, &header) != nil { result.append((current, header)) }
            scn = libelf.elf_nextscn(elf, current)
        }
        return result
    }

    /// The first section called `name`, if any.
    func section(named name: String) -> (scn: OpaquePointer, header: GElf_Shdr)? {
        var namesIndex = 0
        guard libelf.elf_getshdrstrndx(elf, &namesIndex) == 0 else { return nil }
        return sections.first { section in
            guard let cName = libelf.elf_strptr(elf, namesIndex, Int(section.header.sh_name)) else { return false }
            return String(cString: cName) == name
        }
    }
}

extension LoadSegment {
    /// Converts a file offset to an ELF virtual address through the segment that loads it.
    /// Falls back to the last segment starting at or before the offset (page tails past `p_filesz`).
    static func vaddr(forFileOffset offset: UInt64, in segments: [LoadSegment]) -> UInt64? {
        if let exact = segments.first(where: { $0.fileOffset <= offset && offset - $0.fileOffset < $0.fileSize }) {
            return offset - exact.fileOffset + exact.vaddr
        }
        guard let nearest = segments.filter({ $0.fileOffset <= offset }).max(by: { $0.fileOffset < $1.fileOffset }) else {
            return nil
        }
        return offset - nearest.fileOffset + nearest.vaddr
    }
}
