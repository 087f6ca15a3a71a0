import CEngine

/// Function starts and names from this process's ELF symbols, for the sampler thread. The
/// module map is read at the first lookup (not when profiling starts, which may be in a library
/// constructor); code mapped later (dlopen) is found by reading it again, at most once per
/// `refreshInterval`, when an address lies outside every known mapping.
struct SymbolLookup: FunctionLookup {
    private static let refreshInterval: UInt64 = 1_000_000_000
    private var modules = ModuleMap(mapsText: "")
    private var symbolizer = Symbolizer(modules: ModuleMap(mapsText: ""))
    /// When the map was last read; 0 before the first lookup.
    private var readAt: UInt64 = 0
    /// Swift async functions: the start standing for each partial function's start, and the first
    /// start seen of each async function (by `asyncFunctionKey`).
    private var asyncFunctionStarts: [UInt: UInt] = [:]
    private var firstStartOfAsyncFunction: [String: UInt] = [:]

    /// A lookup that reads the mappings when first used.
    init() {}

    mutating func functionStart(of address: UInt) -> UInt {
        refreshIfUnmapped(address)
        let start = symbolizer.functionStart(of: address)
        if let known = asyncFunctionStarts[start] { return known }
        var canonical = start
        if let key = symbolizer.symbolize(start).asyncFunctionKey {
            canonical = firstStartOfAsyncFunction[key] ?? start
            firstStartOfAsyncFunction[key] = canonical
        }
        asyncFunctionStarts[start] = canonical
        return canonical
    }

    mutating func name(of address: UInt) -> String {
        refreshIfUnmapped(address)
        return symbolizer.symbolize(address).name
    }

    private mutating func refreshIfUnmapped(_ address: UInt) {
        guard modules.module(containing: address) == nil, modules.pseudoRegion(containing: address) == nil else { return }
        let now = ss_now_ns()
        guard readAt == 0 || now &- readAt >= Self.refreshInterval else { return }
        modules = .current()
        symbolizer = Symbolizer(modules: modules)
        readAt = now
    }
}
