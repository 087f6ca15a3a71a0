import FileFormatLibraries
import Glibc

extension ElfFile {
    /// The entries of the procedure linkage table named `NAME@plt`, as perf and gdb name them: a
    /// call to a shared library's function passes through one, and a sample taken there is that
    /// call's. Each 16-byte entry of `.plt` and `.plt.sec` whose code is `jmp *SLOT(%rip)` (after
    /// an `endbr64` and a `bnd` prefix in code built for indirect-branch tracking) is named by the
    /// jump-slot relocation of that GOT slot in `.rela.plt` and its `.dynsym` symbol; an entry
    /// that is not such a jump (the lazy binder's, the IBT stubs of `.plt`) is left unnamed.
    /// Nil if the file has no such entries.
    func pltSymbols() -> SymbolSource? {
        let sections = self.sections
        guard let relocations = section(named: ".rela.plt"), relocations.header.sh_entsize > 0,
              let relocationData = libelf.elf_getdata(relocations.scn, nil),
              let dynamicSymbols = sections.first(where: { libelf.elf_ndxscn($0.scn) == Int(relocations.header.sh_link) }),
              let symbolData = libelf.elf_getdata(dynamicSymbols.scn, nil) else { return nil }
        // The GOT slot each relocation fills, and its symbol's name.
        var nameOfSlot: [UInt64: UInt32] = [:]
        for index in 0..<Int(relocations.header.sh_size / relocations.header.sh_entsize) {
            var relocation = GElf_Rela()
            var symbol = GElf_Sym()
            guard libelf.gelf_getrela(relocationData, Int32(index), &relocation) != nil,
                  libelf.gelf_getsym(symbolData, Int32(relocation.r_info >> 32), &symbol) != nil, symbol.st_name != 0 else { continue }
            nameOfSlot[relocation.r_offset] = symbol.st_name
        }
        var entries: [RawFunctionSymbol] = []
        for name in [".plt", ".plt.sec"] {
            guard let table = section(named: name), let data = libelf.elf_getdata(table.scn, nil), let bytes = data.pointee.d_buf else { continue }
            let code = UnsafeRawBufferPointer(start: bytes, count: Int(data.pointee.d_size))
            for entry in stride(from: 0, to: code.count - 15, by: 16) {
                // jmp *disp32(%rip): ff 25, at the entry's start, after endbr64 (f3 0f 1e fa), or after endbr64 and bnd (f2).
                guard let jump = [0, 4, 5].first(where: { code[entry + $0] == 0xff && code[entry + $0 + 1] == 0x25 }) else { continue }
                let displacement = Int32(bitPattern: code.loadUnaligned(fromByteOffset: entry + jump + 2, as: UInt32.self).littleEndian)
                let address = table.header.sh_addr &+ UInt64(entry)
                let slot = address &+ UInt64(jump + 6) &+ UInt64(bitPattern: Int64(displacement))
                guard let nameOffset = nameOfSlot[slot] else { continue }
                entries.append(RawFunctionSymbol(value: address, size: 16, sectionEnd: nil, nameOffset: nameOffset))
            }
        }
        guard !entries.isEmpty else { return nil }
        let names = PLTNames()
        let stringTable = Int(dynamicSymbols.header.sh_link)
        return SymbolSource(symbols: entries) { [self] offset in
            libelf.elf_strptr(elf, stringTable, Int(offset)).map { names.suffixed(UnsafePointer($0)) }
        }
    }
}

/// The `NAME@plt` strings of one table while it is built (`SymbolSource.name` hands out C strings).
private final class PLTNames {
    private var made: [UnsafeMutablePointer<CChar>] = []

    /// `name` followed by `@plt`, kept until this object goes.
    func suffixed(_ name: UnsafePointer<CChar>) -> UnsafePointer<CChar> {
        let length = strlen(name), suffix = "@plt"
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: length + suffix.utf8.count + 1)
        copy.initialize(from: name, count: length)
        for (index, byte) in suffix.utf8.enumerated() { copy[length + index] = CChar(bitPattern: byte) }
        copy[length + suffix.utf8.count] = 0
        made.append(copy)
        return UnsafePointer(copy)
    }

    deinit { made.forEach { $0.deallocate() } }
}
