import Glibc
import CEngineHeader
import Synchronization

/// The one symbolizer of a profiling session, configured once with the session's options
/// (debug root, specializations, lines): invocation tracking and stall reports name through it
/// while the session runs, and the profile built at its end (or at a snapshot) through it too,
/// so every name follows the same options and each module's tables load once. The mappings are
/// read at the first use (not when profiling starts, which may be in a library constructor),
/// again when an address lies outside every known mapping (at most once per second: code
/// mapped by dlopen), and afresh for each profile; so is the perf map the program may write
/// (`/tmp/perf-PID.map`: names of its JIT code), of which only what was appended since is
/// read (`PerfMapFile`). Safe to use from any thread.
final class SessionSymbols: @unchecked Sendable {
    private static let remapIntervalNanoseconds: UInt64 = 1_000_000_000
    private let lock = Mutex<Void>(())
    private let symbolizer: Symbolizer
    /// When the mappings were last read; 0 before the first use.
    private var readAt: UInt64 = 0
    private let reads = Atomic<Int>(0)
    /// The perf map of the process (its pid: a forked child's session reads the child's), read as it grows.
    private var perfMap = (pid: getpid(), file: PerfMapFile(pid: getpid()))

    /// A symbolizer with the session's `options`.
    init(options: SymbolOptions) {
        symbolizer = Symbolizer(modules: ModuleMap(mapsText: ""), options: options)
    }

    /// Runs `body` with the symbolizer over this process's current mappings (read now).
    func withCurrentMappings<Result>(_ body: (Symbolizer) -> Result) -> Result {
        lock.withLock { _ in
            remap(at: ss_now_ns())
            return body(symbolizer)
        }
    }

    /// The name and location of `address` (see `Symbolizer.symbolize`).
    func symbolize(_ address: UInt) -> SymbolizedFrame {
        lock.withLock { _ in
            remapIfUnmapped(address)
            return symbolizer.symbolize(address)
        }
    }

    /// How many times the mappings have been read: what was looked up before the count changed
    /// may no longer hold (a module unloaded, another loaded at its addresses).
    var mappingsRead: Int { reads.load(ordering: .relaxed) }

    /// The start of the function holding `address` (see `Symbolizer.functionStart`).
    func functionStart(of address: UInt) -> UInt {
        lock.withLock { _ in
            remapIfUnmapped(address)
            return symbolizer.functionStart(of: address)
        }
    }

    private func remapIfUnmapped(_ address: UInt) {
        let map = symbolizer.moduleMap
        guard map.module(containing: address) == nil, map.pseudoRegion(containing: address) == nil else { return }
        let now = ss_now_ns()
        guard readAt == 0 || now &- readAt >= Self.remapIntervalNanoseconds else { return }
        remap(at: now)
    }

    private func remap(at now: UInt64) {
        let pid = getpid()
        if perfMap.pid != pid { perfMap = (pid, PerfMapFile(pid: pid)) }
        symbolizer.remap(.current(), perfMapFile: &perfMap.file)
        readAt = now
        reads.add(1, ordering: .relaxed)
    }
}
