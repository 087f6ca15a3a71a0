import CSupport

/// Function starts and names from this process's ELF symbols, for the sampler thread. Code
/// mapped after the module map was read (dlopen) is found by reading the map again, at most
/// once per `refreshInterval`, when an address lies outside every known mapping.
struct SymbolLookup: FunctionLookup {
    private static let refreshInterval: UInt64 = 1_000_000_000
    private var modules: ModuleMap
    private var symbolizer: Symbolizer
    private var readAt: UInt64

    /// A lookup over the current mappings.
    init() {
        modules = .current()
        symbolizer = Symbolizer(modules: modules)
        readAt = ss_now_ns()
    }

    mutating func functionStart(of address: UInt) -> UInt {
        refreshIfUnmapped(address)
        return symbolizer.functionStart(of: address)
    }

    mutating func name(of address: UInt) -> String {
        refreshIfUnmapped(address)
        return symbolizer.symbolize(address).name
    }

    private mutating func refreshIfUnmapped(_ address: UInt) {
        guard modules.module(containing: address) == nil, modules.pseudoRegion(containing: address) == nil else { return }
        let now = ss_now_ns()
        guard now &- readAt >= Self.refreshInterval else { return }
        modules = .current()
        symbolizer = Symbolizer(modules: modules)
        readAt = now
    }
}
