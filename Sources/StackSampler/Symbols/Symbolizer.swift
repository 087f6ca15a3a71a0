import FileFormatLibraries

/// Resolves addresses to names through the ELF symbol tables of the loaded modules, and when
/// asked to, to source lines and inlined calls through their DWARF; caches per address,
/// loads each module's tables once, lazily. Not thread-safe: use from one task/thread.
final class Symbolizer {
    /// The mappings addresses are looked up in.
    private(set) var moduleMap: ModuleMap
    /// Names of generated (JIT) code, for addresses no module's symbol covers.
    private var perfMap: PerfMap
    private let debugFiles: DebugFileLocator
    private let keepsSpecializations: Bool
    private let resolvesLines: Bool
    /// Loaded images by path; `.some(nil)` marks a file that could not be read.
    private var images: [String: ModuleImage?] = [:]
    /// This process's vDSO image, read from memory on first use; `.some(nil)` if unusable.
    private var vdsoImage: ModuleImage??
    private var cache: [UInt: SymbolizedFrame] = [:]
    private var functionStarts: [UInt: UInt] = [:]

    /// A symbolizer over `modules` (by default this process's current mappings), naming generated
    /// code through `perfMap`.
    init(modules: ModuleMap = .current(), perfMap: PerfMap = PerfMap(), options: SymbolOptions = SymbolOptions()) {
        self.moduleMap = modules
        self.perfMap = perfMap
        self.debugFiles = DebugFileLocator(root: options.debugRoot)
        self.keepsSpecializations = options.keepsSpecializations
        self.resolvesLines = options.resolvesLines
    }

    /// Looks addresses up in `modules` and in the perf map with what `perfMapFile` appended since
    /// (mappings read again: a module loaded or unloaded since, code generated since). Names
    /// found so far are forgotten; each file's tables stay loaded. Tables of modules no longer
    /// mapped are released, so a long-lived session that loads and unloads plugins holds the
    /// tables of what is mapped now, not of everything ever mapped.
    func remap(_ modules: ModuleMap, perfMapFile: inout PerfMapFile) {
        moduleMap = modules
        perfMapFile.update(&perfMap)
        cache.removeAll(keepingCapacity: true)
        functionStarts.removeAll(keepingCapacity: true)
        let mapped = Set(modules.modules.map(\.path))
        images = images.filter { mapped.contains($0.key) }
    }

    /// Bytes held by the symbol and function tables of the modules loaded so far.
    var tableBytes: Int {
        images.values.reduce(0) { $0 + ($1?.byteCount ?? 0) } + ((vdsoImage ?? nil)?.byteCount ?? 0)
    }

    /// Resolves `address` as given (callers pass the leaf PC and return address − 1 for callers).
    func symbolize(_ address: UInt) -> SymbolizedFrame {
        if let known = cache[address] { return known }
        var frame = resolve(address)
        frame.name = Self.withoutSemicolons(frame.name)
        frame.fullName = Self.withoutSemicolons(frame.fullName)
        for index in frame.inlined.indices {
            frame.inlined[index].name = Self.withoutSemicolons(frame.inlined[index].name)
        }
        cache[address] = frame
        return frame
    }

    /// The start of the function containing `address` (callers pass the leaf PC and return
    /// address − 1 for callers, as for `symbolize`); cached per address. Used to tell one
    /// function's invocations apart while the PC moves inside it.
    ///
    /// The start comes from the covering symbol or, in stripped code, from the unwind data's
    /// function ranges. Code in neither (no module, no unwind entry) is its own start.
    func functionStart(of address: UInt) -> UInt {
        if let known = functionStarts[address] { return known }
        let frame = symbolize(address)
        var start = address
        if let function = frame.functionStart, let offset = frame.moduleOffset, offset >= function, address >= offset - function {
            start = address - (offset - function)
        }
        functionStarts[address] = start
        return start
    }

    /// `name` with each `;` replaced by `:` (the folded format's separator).
    private static func withoutSemicolons(_ name: String) -> String {
        name.utf8.contains(UInt8(ascii: ";")) ? String(name.map { $0 == ";" ? ":" : $0 }) : name
    }

    private func resolve(_ address: UInt) -> SymbolizedFrame {
        guard let module = moduleMap.module(containing: address) else {
            if let generated = generatedCode(address) { return generated }
            if let region = moduleMap.pseudoRegion(containing: address), let vdso = vdso(region) {
                let vaddr = vdso.vaddr(of: address, mappedAt: region.start, fileOffset: 0)
                if let index = vdso.symbols.index(covering: vaddr) {
                    return SymbolizedFrame(name: vdso.demangledName(at: index, keepingSpecializations: false).readable, modulePath: region.name,
                                           moduleOffset: UInt(vaddr), functionStart: UInt(vdso.symbols.entries[index].start),
                                           kind: .native, isResolved: true)
                }
            }
            return SymbolizedFrame(name: pseudoName(address), modulePath: nil, moduleOffset: nil,
                                   functionStart: nil, kind: .unknown, isResolved: false)
        }
        let image = self.image(for: module.path)
        let vaddr = image?.vaddr(of: address, mappedAt: module.start, fileOffset: module.fileOffset)
            ?? UInt64(address - module.start + module.fileOffset)
        var frame = named(vaddr, in: module, image: image)
        if !frame.isResolved, let generated = generatedCode(address) { return generated }
        if let lines = image?.lines {
            let answer = lines.answer(at: vaddr)
            frame.location = answer.location
            frame.inlined = answer.inlined.map {
                InlinedFrame(name: DemangledName(symbolName: $0.name, keepingSpecializations: keepsSpecializations).readable,
                             location: $0.location)
            }
        }
        return frame
    }

    /// The frame of ELF vaddr `vaddr` of `module`: its symbol, else its unwind data function, else itself.
    private func named(_ vaddr: UInt64, in module: Module, image: ModuleImage?) -> SymbolizedFrame {
        if let image, let index = image.symbols.index(covering: vaddr) {
            let name = image.demangledName(at: index, keepingSpecializations: keepsSpecializations)
            var frame = SymbolizedFrame(name: name.readable, modulePath: module.path, moduleOffset: UInt(vaddr),
                                        functionStart: UInt(image.symbols.entries[index].start), kind: name.kind, isResolved: true)
            frame.fullName = name.full
            return frame
        }
        // No symbol covers it: name the function the unwind data puts it in, so all samples of
        // one stripped function share a name; outside every function, the address itself.
        let function = image?.functions.range(containing: vaddr)
        let named = function?.lowerBound ?? vaddr
        return SymbolizedFrame(name: "\(module.basename)+0x\(String(named, radix: 16))", modulePath: module.path,
                               moduleOffset: UInt(vaddr), functionStart: function.map { UInt($0.lowerBound) },
                               kind: .unknown, isResolved: false)
    }

    /// The frame of `address` in code the perf map names (its module offset is the address).
    private func generatedCode(_ address: UInt) -> SymbolizedFrame? {
        guard let entry = perfMap.entry(containing: address) else { return nil }
        return SymbolizedFrame(name: entry.name, modulePath: nil, moduleOffset: address, functionStart: entry.start,
                               kind: .native, isResolved: true)
    }

    /// `[vdso]+0xOFFSET` for named file-less mappings, `[anon]+0xADDRESS` for anonymous ones,
    /// `[unknown]` outside every executable mapping.
    private func pseudoName(_ address: UInt) -> String {
        guard let region = moduleMap.pseudoRegion(containing: address) else { return "[unknown]" }
        if region.name.isEmpty { return "[anon]+0x\(String(address, radix: 16))" }
        return "\(region.name)+0x\(String(address - region.start, radix: 16))"
    }

    /// The vDSO's symbols, when `region` is this process's vDSO (`AT_SYSINFO_EHDR`); a map
    /// read from another process's maps text must not make us read our memory at its addresses.
    private func vdso(_ region: PseudoRegion) -> ModuleImage? {
        guard region.name == "[vdso]" else { return nil }
        if let known = vdsoImage { return known }
        var image: ModuleImage?
        if auxiliaryValue(33 /* AT_SYSINFO_EHDR */) == region.start, let base = UnsafeRawPointer(bitPattern: region.start),
           let file = ElfFile(image: UnsafeRawBufferPointer(start: base, count: Int(region.end - region.start))) {
            image = ModuleImage(file: file, path: nil, debugFiles: nil)
        }
        vdsoImage = .some(image)
        return image
    }

    private func image(for path: String) -> ModuleImage? {
        if let known = images[path] { return known }
        let image = ModuleImage(path: path, debugFiles: debugFiles, readsLines: resolvesLines)
        images[path] = .some(image)
        return image
    }
}
