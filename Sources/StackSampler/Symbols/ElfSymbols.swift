import FileFormatLibraries
import Glibc

extension ElfFile {
    /// The function symbols (`STT_FUNC`, `STT_GNU_IFUNC`; defined, nonzero value) of the first
    /// section of type `tableType` (`SHT_SYMTAB` or `SHT_DYNSYM`); nil if it has none.
    /// The result keeps this file open until it is dropped, to read the names.
    func functionSymbols(in tableType: Int32) -> SymbolSource? {
        let sections = self.sections
        guard let table = sections.first(where: { $0.header.sh_type == UInt32(tableType) }) else { return nil }
        // End address of each allocated section by index, to bound unsized symbols.
        var sectionEnds: [Int: UInt64] = [:]
        for section in sections where section.header.sh_flags & UInt64(SHF_ALLOC) != 0 {
            sectionEnds[libelf.elf_ndxscn(section.scn)] = section.header.sh_addr &+ section.header.sh_size
        }
        let symbols = rawFunctionSymbols(table.scn, header: table.header, sectionEnds: sectionEnds)
        guard !symbols.isEmpty else { return nil }
        let stringTable = Int(table.header.sh_link)
        return SymbolSource(symbols: symbols) { [self] offset in
            UnsafePointer(libelf.elf_strptr(elf, stringTable, Int(offset)))
        }
    }

    private func rawFunctionSymbols(_ scn: OpaquePointer, header: GElf_Shdr, sectionEnds: [Int: UInt64]) -> [RawFunctionSymbol] {
        guard header.sh_entsize > 0, let data = libelf.elf_getdata(scn, nil) else { return [] }
        let count = Int(header.sh_size / header.sh_entsize)
        var result: [RawFunctionSymbol] = []
        for index in 0..<count {
            var symbol = GElf_Sym()
            guard libelf.gelf_getsym(data, Int32(index), &symbol) != nil else { continue }
            let type = Int32(symbol.st_info & 0xf) // GELF_ST_TYPE
            guard type == STT_FUNC || type == STT_GNU_IFUNC,
                  symbol.st_value != 0, symbol.st_shndx != UInt16(SHN_UNDEF) else { continue }
            let sectionIndex = Int(symbol.st_shndx)
            let sectionEnd = sectionIndex < Int(SHN_LORESERVE) ? sectionEnds[sectionIndex] : nil
            result.append(RawFunctionSymbol(value: symbol.st_value, size: symbol.st_size,
                                            sectionEnd: sectionEnd, nameOffset: symbol.st_name))
        }
        return result
    }
}
