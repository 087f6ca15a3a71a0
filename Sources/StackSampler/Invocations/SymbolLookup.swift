/// Function starts and names for invocation tracking, from the session's symbolizer; the
/// partial functions of a Swift async function share one start (the first seen), so that an
/// async function's invocation spans its awaits.
struct SymbolLookup: FunctionLookup {
    private let symbols: SessionSymbols
    /// Swift async functions: the start standing for each partial function's start, and the first
    /// start seen of each async function (by `asyncFunctionKey`).
    private var asyncFunctionStarts: [UInt: UInt] = [:]
    private var firstStartOfAsyncFunction: [String: UInt] = [:]
    /// Each address's start as returned, while the mappings stay as they were read
    /// (`SessionSymbols.mappingsRead` at `startsReadAt`): the tracker asks for the same return
    /// addresses sample after sample, and each answer from the symbols costs a lock and a
    /// search of the modules (half of the tracker's time on a service at 100 Hz).
    private var startsByAddress: [UInt: UInt] = [:]
    private var startsReadAt = -1

    /// A lookup through the session's `symbols`.
    init(symbols: SessionSymbols) {
        self.symbols = symbols
    }

    mutating func functionStart(of address: UInt) -> UInt {
        let reads = symbols.mappingsRead
        if reads != startsReadAt {
            startsByAddress.removeAll(keepingCapacity: true)
            startsReadAt = reads
        }
        if let known = startsByAddress[address] { return known }
        let canonical = canonicalStart(of: address)
        startsByAddress[address] = canonical
        return canonical
    }

    /// The start of the function holding `address`, the first start seen for a Swift async function's parts.
    private mutating func canonicalStart(of address: UInt) -> UInt {
        let start = symbols.functionStart(of: address)
        if let known = asyncFunctionStarts[start] { return known }
        var canonical = start
        if let key = symbols.symbolize(start).asyncFunctionKey {
            canonical = firstStartOfAsyncFunction[key] ?? start
            firstStartOfAsyncFunction[key] = canonical
        }
        asyncFunctionStarts[start] = canonical
        return canonical
    }

    mutating func name(of address: UInt) -> String {
        symbols.symbolize(address).name
    }
}
