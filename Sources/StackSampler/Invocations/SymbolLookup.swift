/// Function starts and names for invocation tracking, from the session's symbolizer; the
/// partial functions of a Swift async function share one start (the first seen), so that an
/// async function's invocation spans its awaits.
struct SymbolLookup: FunctionLookup {
    private let symbols: SessionSymbols
    /// Swift async functions: the start standing for each partial function's start, and the first
    /// start seen of each async function (by `asyncFunctionKey`).
    private var asyncFunctionStarts: [UInt: UInt] = [:]
    private var firstStartOfAsyncFunction: [String: UInt] = [:]

    /// A lookup through the session's `symbols`.
    init(symbols: SessionSymbols) {
        self.symbols = symbols
    }

    mutating func functionStart(of address: UInt) -> UInt {
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
