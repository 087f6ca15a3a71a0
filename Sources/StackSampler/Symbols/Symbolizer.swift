import CElf

/// What the symbolizer keeps of one ELF file: how to turn file offsets into vaddrs, the
/// sorted function symbols, and the names demangled so far.
private final class ModuleImage {
    let isFixedAddress: Bool
    let loadSegments: [LoadSegment]
    let symbols: SymbolTable
    var demangled: [Int: (name: String, kind: FrameKind)] = [:]

    /// Reads `path` once; nil if it is not a readable ELF file.
    init?(path: String) {
        guard let file = ElfFile(path: path) else { return nil }
        isFixedAddress = file.type == UInt16(ET_EXEC)
        loadSegments = file.loadSegments
        symbols = file.functionSymbols()
    }

    /// ELF vaddr of `address` inside `module`'s mapping.
    func vaddr(of address: UInt, in module: Module) -> UInt64 {
        if isFixedAddress { return UInt64(address) }  // ET_EXEC: loaded at its link-time addresses.
        let fileOffset = UInt64(address - module.start + module.fileOffset)
        return LoadSegment.vaddr(forFileOffset: fileOffset, in: loadSegments) ?? fileOffset
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
    private var cache: [UInt: SymbolizedFrame] = [:]

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

    private func resolve(_ address: UInt) -> SymbolizedFrame {
        guard let module = moduleMap.module(containing: address) else {
            return SymbolizedFrame(name: pseudoName(address), modulePath: nil, moduleOffset: nil,
                                   kind: .unknown, isResolved: false)
        }
        let image = self.image(for: module.path)
        let vaddr = image?.vaddr(of: address, in: module) ?? UInt64(address - module.start + module.fileOffset)
        if let image, let index = image.symbols.index(covering: vaddr) {
            let (name, kind) = image.demangledName(at: index)
            return SymbolizedFrame(name: name, modulePath: module.path, moduleOffset: UInt(vaddr),
                                   kind: kind, isResolved: true)
        }
        return SymbolizedFrame(name: "\(module.basename)+0x\(String(vaddr, radix: 16))", modulePath: module.path,
                               moduleOffset: UInt(vaddr), kind: .unknown, isResolved: false)
    }

    /// `[vdso]+0xOFFSET` for named file-less mappings, `[anon]+0xADDRESS` for anonymous ones,
    /// `[unknown]` outside every executable mapping.
    private func pseudoName(_ address: UInt) -> String {
        guard let region = moduleMap.pseudoRegion(containing: address) else { return "[unknown]" }
        if region.name.isEmpty { return "[anon]+0x\(String(address, radix: 16))" }
        return "\(region.name)+0x\(String(address - region.start, radix: 16))"
    }

    private func image(for path: String) -> ModuleImage? {
        if let known = images[path] { return known }
        let image = ModuleImage(path: path)
        images[path] = .some(image)
        return image
    }
}
