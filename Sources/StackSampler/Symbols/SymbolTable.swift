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

/// Function symbols of one module, sorted by address, with the names of just those symbols
/// copied into one byte blob (so no libelf handle or file descriptor stays open).
///
/// Coverage: a sized symbol covers exactly `[value, value + size)`; an unsized one covers up
/// to the next symbol's address, but not past the end of its section.
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

    /// Builds the table. `name` returns the NUL-terminated name for a `nameOffset`, or nil.
    /// Symbols sharing an address (aliases) keep one entry: the largest, then the first seen.
    init(symbols: [RawFunctionSymbol], name: (UInt32) -> UnsafePointer<CChar>?) {
        let sorted = symbols.enumerated().sorted { lhs, rhs in
            if lhs.element.value != rhs.element.value { return lhs.element.value < rhs.element.value }
            if lhs.element.size != rhs.element.size { return lhs.element.size > rhs.element.size }
            return lhs.offset < rhs.offset
        }.map(\.element)
        var unique: [RawFunctionSymbol] = []
        unique.reserveCapacity(sorted.count)
        for symbol in sorted where unique.last?.value != symbol.value { unique.append(symbol) }

        entries.reserveCapacity(unique.count)
        for (index, symbol) in unique.enumerated() {
            guard let cName = name(symbol.nameOffset) else { continue }
            let end: UInt64
            if symbol.size > 0 {
                end = symbol.value &+ symbol.size
            } else {
                let next = index + 1 < unique.count ? unique[index + 1].value : UInt64.max
                end = min(next, symbol.sectionEnd ?? UInt64.max)
            }
            guard end > symbol.value, names.count < Int(UInt32.max) else { continue }
            let offset = UInt32(names.count)
            names.append(contentsOf: UnsafeBufferPointer(start: cName, count: strlen(cName) + 1).lazy.map { UInt8(bitPattern: $0) })
            entries.append(Entry(start: symbol.value, end: end, nameOffset: offset))
        }
    }

    /// Index of the entry covering `vaddr`, or nil if no symbol covers it.
    func index(covering vaddr: UInt64) -> Int? {
        // Binary search for the last entry with start <= vaddr.
        var low = 0
        var high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].start <= vaddr { low = mid + 1 } else { high = mid }
        }
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
