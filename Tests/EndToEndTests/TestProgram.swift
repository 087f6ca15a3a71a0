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
    /// Profiles a region of itself through the C API, linked against the preload library.
    case cAPI = "c_api"

    /// The source file, relative to Tests/Programs.
    private var source: String {
        self == .matrix ? "matrix.swift" : rawValue + ".c"
    }

    /// The compiler command line, minus the output path and source.
    /// C programs: gcc -O2 without frame pointers, as most Debian code is built.
    private var compiler: [String] {
        switch self {
        case .matrix: ["swiftc", "-O"]
        case .threads: ["gcc", "-O2", "-pthread"]
        case .split, .ownSigprof, .exitStatus: ["gcc", "-O2"]
        case .cAPI: ["gcc", "-O2", "-I", PackagePaths.root + "/Sources/PreloadEntry/include"]
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

    /// Compiles the program into this run's `bin/` directory; throws with the compiler's output on failure.
    private func compile() throws -> String {
        let bin = ScratchDirectory.run + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let output = bin + "/" + rawValue
        let result = try ChildProcess.run(
            compiler[0], Array(compiler.dropFirst()) + ["-o", output, PackagePaths.programs + "/" + source] + libraries,
            in: bin, timeout: .seconds(300))
        guard result.termination == .exited(0) else {
            throw HarnessError("compiling \(source) failed: \(result)")
        }
        return output
    }
}
