import CEngineHeader
import Glibc

/// The files that hold only the profiler's own code in this process (the preload library with
/// the engine, and its Swift part), so that a flame graph can set their frames apart. Empty
/// when the profiler is linked into the program (its code is then in the program's own file).
enum ProfilerModules {
    /// The paths, as `map` (this process's mappings) names them.
    static func paths(in map: ModuleMap) -> Set<String> {
        let program = realpath("/proc/thread-self/exe", nil).map { resolved in
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return Set(ownCode.compactMap { map.module(containing: $0)?.path }.filter { $0 != program })
    }

    /// Where the profiler's own modules are loaded (`dladdr`'s base of each), for
    /// `isProfilerCode`; empty when the profiler is linked into the program.
    static func loadedBases() -> Set<UInt> {
        let program = UInt(ss_program_base())
        return Set(ownCode.map { UInt(ss_module_base_of($0, nil)) }.filter { $0 != 0 && $0 != program })
    }

    /// The executable mappings of the profiler's own modules, for a check cheaper than a
    /// `dladdr` per frame; empty when the profiler is linked into the program.
    static func codeRanges() -> [Range<UInt>] {
        let map = ModuleMap.current()
        let own = paths(in: map)
        return map.modules.filter { own.contains($0.path) }.map { $0.start..<$0.end }
    }

    /// An address of code in each of the profiler's modules: the engine's, and this Swift part's
    /// (a function of its own: `#dsohandle`, its ELF header, lies outside its executable mapping).
    private static var ownCode: [UInt] {
        [unsafeBitCast(ss_engine_init as @convention(c) (UnsafePointer<ss_config>?) -> Int32, to: UInt.self),
         unsafeBitCast(codeOfThisModule, to: UInt.self)]
    }

    /// A function compiled into this module, whose address names the module's code.
    private static let codeOfThisModule: @convention(c) () -> Void = {}

    /// Whether `address` is code of a module loaded at one of `bases`.
    static func isProfilerCode(_ address: UInt, bases: Set<UInt>) -> Bool {
        !bases.isEmpty && bases.contains(UInt(ss_module_base_of(address, nil)))
    }
}
