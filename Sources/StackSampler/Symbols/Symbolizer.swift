import CElf

/// What the symbolizer keeps of one ELF file: how to turn file offsets into vaddrs, the
/// sorted function symbols, and the names demangled so far.
private final class ModuleImage {
    let isFixedAddress: Bool
    let loadSegments: [LoadSegment]
    let symbols: SymbolTable
    var demangled: [Int: (name: String, kind: FrameKind)] = [:]

    /// Reads `path` once; nil if it is not a readable ELF file.
    convenience init?(path: String) {
        guard let file = ElfFile(path: path) else { return nil }
        self.init(file: file)
    }

    init(file: ElfFile) {
        isFixedAddress = file.type == UInt16(ET_EXEC)
        loadSegments = file.loadSegments
        symbols = file.functionSymbols()
    }

    /// ELF vaddr of `address`, mapped at `start` from file offset `fileOffset`.
    func vaddr(of address: UInt, mappedAt start: UInt, fileOffset: UInt) -> UInt64 {
        if isFixedAddress { return UInt64(address) }  // ET_EXEC: loaded at its link-time addresses.
        let offset = UInt64(address - start + fileOffset)
        return LoadSegment.vaddr(forFileOffset: offset, in: loadSegments) ?? offset
    }

    func demangledName(at index: Int) -> (name: String, kind: FrameKind) {
        if let known = demangled[index] { return known }
        let result = Demangler.demangle(symbols.name(at: index))
        demangled[index] = result
        return result
    }
}

/// Resolves addresses to names through the ELF symbol tables of the loaded modules; caches per
/// address, loads each module's table once, lazily. Not thread-safe: use from one task/thread.
public final class Symbolizer {
    private let moduleMap: ModuleMap
    /// Loaded images by path; `.some(nil)` marks a file that could not be read.
    private var images: [String: ModuleImage?] = [:]
    /// This process's vDSO image, read from memory on first use; `.some(nil)` if unusable.
    private var vdsoImage: ModuleImage??
    private var cache: [UInt: SymbolizedFrame] = [:]
    private var functionStarts: [UInt: UInt] = [:]

    /// A symbolizer over `modules` (by default this process's current mappings).
    public init(modules: ModuleMap = .current()) {
        self.moduleMap = modules
    }

    /// Resolves `address` as given (callers pass the leaf PC and return address − 1 for callers).
    public func symbolize(_ address: UInt) -> SymbolizedFrame {
        if let known = cache[address] { return known }
        var frame = resolve(address)
        if frame.name.utf8.contains(UInt8(ascii: ";")) {
            frame.name = String(frame.name.map { $0 == ";" ? ":" : $0 })
        }
        cache[address] = frame
        return frame
    }

    /// The start of the function containing `address` (callers pass the leaf PC and return
    /// address − 1 for callers, as for `symbolize`); cached per address. Used to tell one
    /// function's invocations apart while the PC moves inside it.
    ///
    /// Without a symbol covering the address, the start of its mapping stands in: all unresolved
    /// code of one module (or of one file-less mapping) counts as one function there. Outside every
    /// executable mapping the address is its own start.
    public func functionStart(of address: UInt) -> UInt {
        if let known = functionStarts[address] { return known }
        let start: UInt
        if let placement = place(address) {
            if let image = placement.image, let index = image.symbols.index(covering: placement.vaddr) {
                start = address - UInt(placement.vaddr - image.symbols.entries[index].start)
            } else {
                start = placement.mappingStart
            }
        } else {
            start = address
        }
        functionStarts[address] = start
        return start
    }

    /// Where an address lies: the start of its mapping, its ELF vaddr, the image holding its
    /// symbols (nil if unreadable) and the module (nil for file-less mappings).
    private struct Placement {
        var mappingStart: UInt
        var vaddr: UInt64
        var image: ModuleImage?
        var module: Module?
    }

    /// Places `address` in a file-backed module or in this process's vDSO; nil elsewhere.
    private func place(_ address: UInt) -> Placement? {
        if let module = moduleMap.module(containing: address) {
            let image = self.image(for: module.path)
            let vaddr = image?.vaddr(of: address, mappedAt: module.start, fileOffset: module.fileOffset)
                ?? UInt64(address - module.start + module.fileOffset)
            return Placement(mappingStart: module.start, vaddr: vaddr, image: image, module: module)
        }
        if let region = moduleMap.pseudoRegion(containing: address) {
            let vdso = vdso(region)
            let vaddr = vdso?.vaddr(of: address, mappedAt: region.start, fileOffset: 0) ?? UInt64(address - region.start)
            return Placement(mappingStart: region.start, vaddr: vaddr, image: vdso, module: nil)
        }
        return nil
    }

    private func resolve(_ address: UInt) -> SymbolizedFrame {
        guard let placement = place(address) else {
            return SymbolizedFrame(name: pseudoName(address), modulePath: nil, moduleOffset: nil, kind: .unknown, isResolved: false)
        }
        if let image = placement.image, let index = image.symbols.index(covering: placement.vaddr) {
            let (name, kind) = image.demangledName(at: index)
            // An image without a module is the vDSO's.
            return SymbolizedFrame(name: name, modulePath: placement.module?.path ?? "[vdso]", moduleOffset: UInt(placement.vaddr),
                                   kind: kind, isResolved: true)
        }
        guard let module = placement.module else {
            return SymbolizedFrame(name: pseudoName(address), modulePath: nil, moduleOffset: nil, kind: .unknown, isResolved: false)
        }
        return SymbolizedFrame(name: "\(module.basename)+0x\(String(placement.vaddr, radix: 16))", modulePath: module.path,
                               moduleOffset: UInt(placement.vaddr), kind: .unknown, isResolved: false)
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
            image = ModuleImage(file: file)
        }
        vdsoImage = .some(image)
        return image
    }

    private func image(for path: String) -> ModuleImage? {
        if let known = images[path] { return known }
        let image = ModuleImage(path: path)
        images[path] = .some(image)
        return image
    }
}
