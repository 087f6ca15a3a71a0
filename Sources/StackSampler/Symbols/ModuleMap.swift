/// A mapped file-backed executable region of this process (from /proc/self/maps).
public struct Module: Sendable, Hashable {
    /// Absolute path as in maps (a deleted file keeps the ` (deleted)` suffix maps shows).
    public var path: String
    /// Mapping start address.
    public var start: UInt
    /// Mapping end address (exclusive).
    public var end: UInt
    /// File offset of the mapping.
    public var fileOffset: UInt
    /// `NT_GNU_BUILD_ID` as lowercase hex; nil if absent, the file is unreadable, or not read
    /// (see `ModuleMap.modules(holding:)`).
    public var buildID: String?

    /// Creates a module description.
    package init(path: String, start: UInt, end: UInt, fileOffset: UInt, buildID: String?) {
        self.path = path
        self.start = start
        self.end = end
        self.fileOffset = fileOffset
        self.buildID = buildID
    }

    /// The last path component, used in `basename+0xOFFSET` names.
    public var basename: String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// An executable mapping without a file: `[vdso]`, `[vsyscall]` or anonymous (JIT) memory.
struct PseudoRegion: Sendable, Hashable {
    var start: UInt
    var end: UInt
    /// The maps pathname column, e.g. `[vdso]`; empty for anonymous memory.
    var name: String
}

/// The executable mappings of a process.
struct ModuleMap: Sendable {
    /// File-backed executable mappings, kept sorted by start address.
    var modules: [Module] {
        didSet { modules.sort { $0.start < $1.start } }
    }
    /// Executable mappings not backed by a file, sorted by start address.
    var pseudoRegions: [PseudoRegion]

    /// The executable mappings of this process, from the calling thread's `maps` (empty if
    /// unreadable): `/proc/self` is the main thread's, empty once it has ended by pthread_exit.
    static func current() -> ModuleMap {
        let bytes = FileIO.readBytes("/proc/thread-self/maps") ?? []
        return ModuleMap(mapsText: String(decoding: bytes, as: UTF8.self))
    }

    /// Parses maps text. Build ids are not read here (a file opened per module costs a
    /// profile that ran in few of them): `modules(holding:)` and `modulesWithBuildIDs()` read them.
    init(mapsText: String) {
        var modules: [Module] = []
        var pseudoRegions: [PseudoRegion] = []
        for entry in MapsParser.parse(mapsText) where entry.isExecutable {
            guard entry.pathname.hasPrefix("/") else {
                pseudoRegions.append(PseudoRegion(start: entry.start, end: entry.end, name: entry.pathname))
                continue
            }
            modules.append(Module(path: entry.pathname, start: entry.start, end: entry.end,
                                  fileOffset: entry.fileOffset, buildID: nil))
        }
        self.modules = modules.sorted { $0.start < $1.start }
        self.pseudoRegions = pseudoRegions.sorted { $0.start < $1.start }
    }

    /// The modules that hold any of `addresses` (the ones a profile ran in), with build ids.
    func modules(holding addresses: some Sequence<UInt>) -> [Module] {
        var held = Set<UInt>()
        for address in addresses {
            if let module = module(containing: address) { held.insert(module.start) }
        }
        return Self.readingBuildIDs(modules.filter { held.contains($0.start) })
    }

    /// Every module, with build ids.
    func modulesWithBuildIDs() -> [Module] { Self.readingBuildIDs(modules) }

    /// `modules` with their build ids read from the files, once per path.
    private static func readingBuildIDs(_ modules: [Module]) -> [Module] {
        var buildIDs: [String: String?] = [:]
        return modules.map { module in
            var module = module
            if let known = buildIDs[module.path] {
                module.buildID = known
            } else {
                module.buildID = ElfFile(path: module.path)?.buildID
                buildIDs[module.path] = .some(module.buildID)
            }
            return module
        }
    }

    /// The module whose mapping contains `address`, or nil.
    func module(containing address: UInt) -> Module? {
        Self.last(in: modules, startingAtOrBefore: address, start: \.start).flatMap { address < $0.end ? $0 : nil }
    }

    /// The file-less executable mapping containing `address`, or nil.
    func pseudoRegion(containing address: UInt) -> PseudoRegion? {
        Self.last(in: pseudoRegions, startingAtOrBefore: address, start: \.start).flatMap { address < $0.end ? $0 : nil }
    }

    /// The last of `items` (sorted by `start`) that starts at or before `address`.
    private static func last<Item>(in items: [Item], startingAtOrBefore address: UInt, start: (Item) -> UInt) -> Item? {
        let after = items.firstIndex(startingAfter: address, start: start)
        return after > 0 ? items[after - 1] : nil
    }
}
