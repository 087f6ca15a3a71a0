import CElf

/// What the symbolizer keeps of one module's ELF file: how to turn file offsets into vaddrs,
/// the function ranges of its unwind data, the sorted function symbols, and the names
/// demangled so far. Built once per module, on its first address.
final class ModuleImage {
    let isFixedAddress: Bool
    let loadSegments: [LoadSegment]
    let functions: FunctionRanges
    let symbols: SymbolTable
    private var demangled: [Int: (name: String, kind: FrameKind)] = [:]

    /// Reads `path` once; nil if it is not a readable ELF file.
    convenience init?(path: String) {
        guard let file = ElfFile(path: path) else { return nil }
        self.init(file: file)
    }

    /// Reads the tables of `file`: its `.symtab` when it has function symbols, else `.dynsym`.
    init(file: ElfFile) {
        isFixedAddress = file.type == UInt16(ET_EXEC)
        loadSegments = file.loadSegments
        functions = file.functionRanges()
        let own = file.functionSymbols(in: SHT_SYMTAB) ?? file.functionSymbols(in: SHT_DYNSYM)
        symbols = SymbolTable(sources: own.map { [$0] } ?? [], functions: functions)
    }

    /// Bytes held by the tables (not counting demangled names).
    var byteCount: Int { functions.byteCount + symbols.byteCount }

    /// ELF vaddr of `address`, mapped at `start` from file offset `fileOffset`.
    func vaddr(of address: UInt, mappedAt start: UInt, fileOffset: UInt) -> UInt64 {
        if isFixedAddress { return UInt64(address) }  // ET_EXEC: loaded at its link-time addresses.
        let offset = UInt64(address - start + fileOffset)
        return LoadSegment.vaddr(forFileOffset: offset, in: loadSegments) ?? offset
    }

    /// The demangled name and kind of symbol `index`, demangled on first use.
    func demangledName(at index: Int) -> (name: String, kind: FrameKind) {
        if let known = demangled[index] { return known }
        let result = Demangler.demangle(symbols.name(at: index))
        demangled[index] = result
        return result
    }
}
