import CElf
import Glibc

extension ElfFile {
    /// The function symbols (`STT_FUNC`, `STT_GNU_IFUNC`; defined, nonzero value) of `.symtab`,
    /// or of `.dynsym` when there is no `.symtab` or it holds no functions.
    func functionSymbols() -> SymbolTable {
        let sections = self.sections
        // End address of each allocated section by index, to bound unsized symbols.
        var sectionEnds: [Int: UInt64] = [:]
        for section in sections where section.header.sh_flags & UInt64(SHF_ALLOC) != 0 {
            sectionEnds[elf_ndxscn(section.scn)] = section.header.sh_addr &+ section.header.sh_size
        }
        for wanted in [UInt32(SHT_SYMTAB), UInt32(SHT_DYNSYM)] {
            guard let table = sections.first(where: { $0.header.sh_type == wanted }) else { continue }
            let symbols = rawFunctionSymbols(table.scn, header: table.header, sectionEnds: sectionEnds)
            if symbols.isEmpty { continue }
            let stringTable = Int(table.header.sh_link)
            return SymbolTable(symbols: symbols) { offset in
                UnsafePointer(elf_strptr(elf, stringTable, Int(offset)))
            }
        }
        return SymbolTable()
    }

    private func rawFunctionSymbols(_ scn: OpaquePointer, header: GElf_Shdr, sectionEnds: [Int: UInt64]) -> [RawFunctionSymbol] {
        guard header.sh_entsize > 0, let data = elf_getdata(scn, nil) else { return [] }
        let count = Int(header.sh_size / header.sh_entsize)
        var result: [RawFunctionSymbol] = []
        for index in 0..<count {
            var symbol = GElf_Sym()
            guard gelf_getsym(data, Int32(index), &symbol) != nil else { continue }
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
