import Foundation
import Synchronization

/// A workload from Tests/Programs, compiled on first use and cached for the rest of the run.
enum TestProgram: String, CaseIterable, Sendable {
    /// Single-threaded; CPU in `work_fifty` / `work_thirty` / `work_twenty`, 50/30/20, self-measured.
    case split
    /// Eight threads named `worker-N`, each spinning in `worker_N`.
    case threads
    /// Installs its own SIGPROF handler and ITIMER_PROF; reports the handler's calls.
    case ownSigprof = "own_sigprof"
    /// Exits with the status given as its argument.
    case exitStatus = "exit_status"
    /// Swift; spends its time in `Matrix.multiply(_:)`.
    case matrix
    /// C++; dlopen/dlclose, exceptions and dl_iterate_phdr on three threads at once.
    case loaderChurn = "loader_churn"
    /// The shared library loader_churn opens and closes.
    case plugin
    /// SIGSEGV the program handles itself, one it does not, and code without unwind info.
    case faults
    /// Recursion 100,000 frames deep.
    case deep
    /// Sleeping threads (EINTR counts) and a thread that blocks SIGPROF.
    case sleepers
    /// Thousands of short-lived threads; counts the process's POSIX timers.
    case churn
    /// Forks children with known exit statuses, and one that execs /bin/true.
    case forker
    /// Dies without running exit handlers: _exit, abort, SIGSEGV, or waits to be killed.
    case victim
    /// Stripped; CPU in the static functions `hot_one` / `hot_two` / `hot_three`, 50/30/20.
    /// Its unstripped build is `unstrippedExecutable()`.
    case stripped
    /// Single-threaded calls of known, self-measured durations: three phases from one caller,
    /// recursion ten deep, one function called twice with a gap; prints `call NAME MS` per call.
    case invocations
    /// A thread named `blocker` blocks for the given seconds in `blocked_wait`, then says `blocker: woke` on stderr.
    case stall
    /// Profiles a region of itself through the C API, linked against the preload library.
    case cAPI = "c_api"
    /// Built with DWARF (`-g`); CPU in `hot_function`, in code inlined from `inner_helper` and `burn_cpu`.
    case inlined
    /// Sets a SIGPROF handler with the way named by its argument (sigset, sysv_signal…) and reports what it saw.
    case dispositionSetters = "disposition_setters"
    /// Signals meeting the signal machinery half-way: siginterrupt, a bad sigaction pointer,
    /// concurrent sigaction writers, SIGSEGV sent during samples.
    case signalRaces = "signal_races"

    /// The source file, relative to Tests/Programs.
    private var source: String {
        switch self {
        case .matrix: "matrix.swift"
        case .loaderChurn: rawValue + ".cpp"
        default: rawValue + ".c"
        }
    }

    /// The compiler command line, minus the output path and source.
    /// C programs: gcc -O2 without frame pointers, as most Debian code is built (with -g where DWARF is the point).
    private var compiler: [String] {
        switch self {
        case .matrix: ["swiftc", "-O"]
        case .loaderChurn: ["g++", "-O2", "-pthread"]
        case .plugin: ["gcc", "-O2", "-shared", "-fPIC"]
        case .threads, .deep, .sleepers, .churn, .stall, .signalRaces: ["gcc", "-O2", "-pthread"]
        case .split, .ownSigprof, .exitStatus, .faults, .forker, .victim, .stripped, .invocations, .dispositionSetters: ["gcc", "-O2"]
        case .cAPI: ["gcc", "-O2", "-I", PackagePaths.root + "/Sources/PreloadEntry/include"]
        case .inlined: ["gcc", "-O2", "-g"]
        }
    }

    /// Libraries to link, after the source.
    private var libraries: [String] {
        switch self {
        case .cAPI: ["-L", BuildProducts.directory, "-lStackSamplerPreload", "-Wl,-rpath," + BuildProducts.directory]
        default: []
        }
    }

    /// Paths of the programs compiled so far in this run.
    private static let compiled = Mutex<[TestProgram: String]>([:])

    /// Path of the compiled program, compiling it now if this run has not yet.
    func executable() throws -> String {
        try Self.compiled.withLock { cache in
            if let path = cache[self] { return path }
            let path = try compile()
            cache[self] = path
            return path
        }
    }

    /// The program as compiled, before stripping (for `nm`); the same as `executable()` for
    /// programs that are not stripped.
    func unstrippedExecutable() throws -> String {
        let path = try executable()
        return self == .stripped ? path + ".unstripped" : path
    }

    /// Compiles the program into this run's `bin/` directory (and strips it, for `.stripped`);
    /// throws with the tool's output on failure.
    private func compile() throws -> String {
        let bin = ScratchDirectory.run + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let output = bin + "/" + rawValue
        let compiled = self == .stripped ? output + ".unstripped" : output
        let result = try ChildProcess.run(
            compiler[0], Array(compiler.dropFirst()) + ["-o", compiled, PackagePaths.programs + "/" + source] + libraries,
            in: bin, timeout: .seconds(300))
        guard result.termination == .exited(0) else {
            throw HarnessError("compiling \(source) failed: \(result)")
        }
        if compiled != output {
            let strip = try ChildProcess.run("strip", ["-o", output, compiled], in: bin, timeout: .seconds(60))
            guard strip.termination == .exited(0) else { throw HarnessError("stripping \(rawValue) failed: \(strip)") }
        }
        return output
    }
}
