import CEngineHeader
import Glibc

/// The files that hold only the profiler's own code in this process (the preload library with
/// the engine, and its Swift part), so that a flame graph can set their frames apart. Empty
/// when the profiler is linked into the program (its code is then in the program's own file).
enum ProfilerModules {
    /// The paths, as `map` (this process's mappings) names them.
    static func paths(in map: ModuleMap) -> Set<String> {
        let engine = unsafeBitCast(ss_engine_init as @convention(c) (UnsafePointer<ss_config>?) -> Int32, to: UInt.self)
        let swiftPart = UInt(bitPattern: UnsafeRawPointer(#dsohandle))
        let program = realpath("/proc/thread-self/exe", nil).map { resolved in
            defer { free(resolved) }
            return String(cString: resolved)
        }
        return Set([engine, swiftPart].compactMap { map.module(containing: $0)?.path }.filter { $0 != program })
    }
}
