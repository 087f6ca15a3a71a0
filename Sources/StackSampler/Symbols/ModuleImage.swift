import FileFormatLibraries

/// What the symbolizer keeps of one module's ELF file: how to turn file offsets into vaddrs,
/// the function ranges of its unwind data, the sorted function symbols, the names
/// demangled so far, and its DWARF when source lines are asked for. Built once per module,
/// on its first address.
final class ModuleImage {
    let isFixedAddress: Bool
    let loadSegments: [LoadSegment]
    let functions: FunctionRanges
    let symbols: SymbolTable
    /// The DWARF of the module or of its separate debug file; nil unless asked for and present.
    let lines: DwarfLines?
    private var demangled: [Int: DemangledName] = [:]

    /// Reads `path` once; nil if it is not a readable ELF file.
    convenience init?(path: String, debugFiles: DebugFileLocator?, readsLines: Bool = false) {
        guard let file = ElfFile(path: path) else { return nil }
        self.init(file: file, path: path, debugFiles: debugFiles, readsLines: readsLines)
    }

    /// Reads the tables of `file`, loaded from `path` (nil for an image in memory). Symbols come
    /// from its `.symtab` when it has function symbols; a stripped file combines its `.dynsym`,
    /// its MiniDebugInfo (`.gnu_debugdata`) and the `.symtab` of its separate debug file;
    /// the entries of its procedure linkage table are named `NAME@plt` (`pltSymbols`).
    /// Function ranges always come from the file itself: debug files keep no `.eh_frame`.
    /// With `readsLines`, DWARF comes from the file itself, else from its separate debug file.
    init(file: ElfFile, path: String?, debugFiles: DebugFileLocator?, readsLines: Bool = false) {
        isFixedAddress = file.type == UInt16(ET_EXEC)
        loadSegments = file.loadSegments
        functions = file.functionRanges()
        var separate: ElfFile??
        func separateDebugFile() -> ElfFile? {
            if let known = separate { return known }
            let found = path.flatMap { debugFiles?.debugFile(for: file, path: $0) }
            separate = .some(found)
            return found
        }
        var sources: [SymbolSource] = []
        if let own = file.functionSymbols(in: SHT_SYMTAB) {
            sources = [own]
        } else {
            sources.append(contentsOf: [
                file.functionSymbols(in: SHT_DYNSYM),
                file.miniDebugInfo()?.functionSymbols(in: SHT_SYMTAB),
                separateDebugFile()?.functionSymbols(in: SHT_SYMTAB),
            ].compactMap { $0 })
        }
        if let stubs = file.pltSymbols() { sources.append(stubs) }
        symbols = SymbolTable(sources: sources, functions: functions)
        lines = readsLines ? DwarfLines(file: file) ?? separateDebugFile().flatMap(DwarfLines.init(file:)) : nil
    }

    /// Bytes held by the tables (not counting demangled names).
    var byteCount: Int { functions.byteCount + symbols.byteCount }

    /// ELF vaddr of `address`, mapped at `start` from file offset `fileOffset`.
    func vaddr(of address: UInt, mappedAt start: UInt, fileOffset: UInt) -> UInt64 {
        if isFixedAddress { return UInt64(address) }  // ET_EXEC: loaded at its link-time addresses.
        let offset = UInt64(address - start + fileOffset)
        return LoadSegment.vaddr(forFileOffset: offset, in: loadSegments) ?? offset
    }

    /// The names and kind of symbol `index`, demangled on first use; Swift names are made
    /// readable (see `SwiftNames`), the other kinds are shown in full.
    func demangledName(at index: Int, keepingSpecializations: Bool) -> DemangledName {
        if let known = demangled[index] { return known }
        let result = DemangledName(symbolName: symbols.name(at: index), keepingSpecializations: keepingSpecializations)
        demangled[index] = result
        return result
    }
}

/// A symbol's name as shown (`readable`), its complete demangling and its kind.
struct DemangledName {
    var readable: String
    var full: String
    var kind: FrameKind

    /// Demangles `symbolName`; Swift names are made readable (see `SwiftNames`), the other
    /// kinds are shown in full.
    init(symbolName: String, keepingSpecializations: Bool) {
        (full, kind) = Demangler.demangle(symbolName)
        readable = kind == .swift ? SwiftNames.readable(full, keepingSpecializations: keepingSpecializations) : full
    }
}
