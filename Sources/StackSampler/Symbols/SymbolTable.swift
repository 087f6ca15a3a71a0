import Glibc

/// A function symbol as read from an ELF symbol table, before sorting.
struct RawFunctionSymbol: Equatable {
    /// `st_value`: the ELF virtual address.
    var value: UInt64
    /// `st_size`; 0 means "unknown size".
    var size: UInt64
    /// End (exclusive) of the section the symbol lives in, when known; bounds unsized symbols.
    var sectionEnd: UInt64?
    /// `st_name`: offset of the name in the symbol table's string table.
    var nameOffset: UInt32
}

/// The function symbols of one symbol table, and how to find their names in its string table.
struct SymbolSource {
    var symbols: [RawFunctionSymbol]
    /// The NUL-terminated name for a `nameOffset`, or nil; valid while the table is built.
    var name: (UInt32) -> UnsafePointer<CChar>?
}

/// Function symbols of one module, sorted by address, with the names of just those symbols
/// copied into one byte blob (so no libelf handle or file descriptor stays open).
///
/// Coverage: a sized symbol covers exactly `[value, value + size)`. An unsized one covers up to
/// the next symbol's address, not past the end of its section, and only within the unwind
/// data's function range that starts at its address; without such a range it covers nothing.
struct SymbolTable: Sendable {
    struct Entry: Sendable, Equatable {
        var start: UInt64
        var end: UInt64
        /// Offset of the NUL-terminated name in `names`.
        var nameOffset: UInt32
    }

    private(set) var entries: [Entry] = []
    private var names: [UInt8] = []

    /// An empty table (module without symbols or unreadable).
    init() {}

    /// Builds the table from the symbols of `sources` (a file's own table, a debug file's, ...),
    /// bounding unsized symbols by `functions`. Symbols sharing an address (aliases, or one
    /// function listed by two sources) keep one entry: the largest, then the first seen.
    init(sources: [SymbolSource], functions: FunctionRanges) {
        var candidates: [SortKey] = []
        candidates.reserveCapacity(sources.reduce(0) { $0 + $1.symbols.count })
        for (sourceIndex, source) in sources.enumerated() {
            for (symbolIndex, symbol) in source.symbols.enumerated() {
                candidates.append(SortKey(value: symbol.value, inverseSize: ~symbol.size,
                                          source: Int32(sourceIndex), index: Int32(symbolIndex)))
            }
        }
        candidates.sort()
        var unique: [SortKey] = []
        unique.reserveCapacity(candidates.count)
        for candidate in candidates where unique.last?.value != candidate.value { unique.append(candidate) }

        entries.reserveCapacity(unique.count)
        names.reserveCapacity(unique.count * 32)
        for (position, key) in unique.enumerated() {
            let source = sources[Int(key.source)]
            let symbol = source.symbols[Int(key.index)]
            let end: UInt64
            if symbol.size > 0 {
                end = symbol.value &+ symbol.size
            } else {
                guard let function = functions.range(startingAt: symbol.value) else { continue }
                let next = position + 1 < unique.count ? unique[position + 1].value : UInt64.max
                end = min(next, symbol.sectionEnd ?? UInt64.max, function.upperBound)
            }
            guard end > symbol.value, names.count < Int(UInt32.max),
                  let cName = source.name(symbol.nameOffset) else { continue }
            let offset = UInt32(names.count)
            names.append(contentsOf: UnsafeRawBufferPointer(start: cName, count: strlen(cName) + 1))
            entries.append(Entry(start: symbol.value, end: end, nameOffset: offset))
        }
    }

    /// Order of the symbols while the table is built: by address, the largest first, then in
    /// the order of the sources. A small value type, so that sorting a large table is cheap.
    private struct SortKey: Comparable {
        var value: UInt64
        var inverseSize: UInt64
        var source: Int32
        var index: Int32

        static func < (lhs: SortKey, rhs: SortKey) -> Bool {
            (lhs.value, lhs.inverseSize, lhs.source, lhs.index) < (rhs.value, rhs.inverseSize, rhs.source, rhs.index)
        }
    }

    /// Bytes held by the table (entries and names).
    var byteCount: Int { entries.capacity * MemoryLayout<Entry>.stride + names.capacity }

    /// Index of the entry covering `vaddr`, or nil if no symbol covers it.
    func index(covering vaddr: UInt64) -> Int? {
        let low = entries.firstIndex(startingAfter: vaddr) { $0.start }
        guard low > 0, vaddr < entries[low - 1].end else { return nil }
        return low - 1
    }

    /// The (mangled) name of entry `index`.
    func name(at index: Int) -> String {
        let offset = Int(entries[index].nameOffset)
        return names.withUnsafeBufferPointer { buffer in
            let tail = UnsafeBufferPointer(rebasing: buffer[offset...])
            let length = tail.firstIndex(of: 0) ?? tail.count
            return String(decoding: UnsafeBufferPointer(rebasing: tail[0..<length]), as: UTF8.self)
        }
    }
}
