import Foundation
import Testing

extension EndToEnd {
    /// What the preload library brings into a process: nothing but itself when idle; when
    /// profiling, its Swift part (one engine, shared) but no symbol library before symbolizing
    /// and no crash handler a program would notice; nothing at all in secure-execution mode.
    @Suite struct PreloadFootprint {
        /// The signals the Swift runtime's crash backtracer takes.
        static let crashSignals: [Int32] = [SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE, SIGSEGV]
        /// The profiler's invisible fault guard: chained, and hidden from the program's `sigaction`.
        static let faultGuardSignals: [Int32] = [SIGSEGV, SIGBUS]

        /// The SigCgt mask a program printed as `caught MASK`, restricted to `signals`.
        static func caught(_ signals: [Int32], in output: String) throws -> [Int32] {
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("caught ") }, "no mask in \(output)")
            let mask = try #require(UInt64(line.dropFirst("caught ".count), radix: 16), "bad mask: \(line)")
            return signals.filter { mask & (1 << UInt64($0 - 1)) != 0 }
        }

        /// The shared objects a `crash maps` run printed, by file name.
        static func modules(in output: String) -> [String] {
            output.split(separator: "\n").filter { $0.hasPrefix("module ") }.map { String($0.dropFirst("module ".count)) }
        }

        /// Environment of a run that only preloads the library (idle) or also profiles.
        static func environment(profiling: Bool, in directory: String) throws -> [String: String] {
            var environment = ["LD_PRELOAD": try BuildProducts.preloadLibrary()]
            if profiling { environment["STACKSAMPLER_OUTPUT"] = directory + "/profile.folded" }
            return environment
        }

        @Test("a null dereference dies as without the profiler, with no crash handler added", arguments: [false, true])
        func nullDereference(profiling: Bool) throws {
            let directory = try ScratchDirectory.make("crash-null-\(profiling)")
            let program = try TestProgram.crash.executable()
            let plain = try ChildProcess.run(program, ["null"], in: directory)
            let run = try ChildProcess.run(program, ["null"], environment: try Self.environment(profiling: profiling, in: directory), in: directory)
            #expect(plain.termination == .signaled(SIGSEGV), "\(plain)")
            #expect(run.termination == plain.termination, "\(run)")
            #expect(run.stderr == plain.stderr, "\(run)")
            let dispositions = { (result: ProcessResult) in result.stdout.split(separator: "\n").filter { $0.hasPrefix("disposition ") } }
            #expect(dispositions(run) == dispositions(plain) && dispositions(plain).count == Self.crashSignals.count, "\(run)")
            let added = Set(try Self.caught(Self.crashSignals, in: run.stdout)).subtracting(try Self.caught(Self.crashSignals, in: plain.stdout))
            #expect(added.isSubset(of: profiling ? Self.faultGuardSignals : []), "crash-signal handlers added: \(added.sorted())\n\(run)")
        }

        @Test("an idle preload maps no Swift runtime and no symbol library")
        func idleModules() throws {
            let directory = try ScratchDirectory.make("footprint-idle")
            let run = try ChildProcess.run(try TestProgram.crash.executable(), ["maps"],
                                           environment: try Self.environment(profiling: false, in: directory), in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let modules = Self.modules(in: run.stdout)
            #expect(modules.contains("libStackSamplerPreload.so"), "\(modules)")
            let unwanted = ["libswift", "libStackSamplerPreloadSwift", "libstdc++", "libbz2", "libdw", "liblzma", "libelf", "libz.", "libunwind"]
            #expect(modules.filter { module in unwanted.contains { module.hasPrefix($0) } } == [], "\(modules)")
        }

        @Test("a profiling run maps no symbol library before it symbolizes, even with lines asked for", arguments: [false, true])
        func profilingModules(lines: Bool) throws {
            let directory = try ScratchDirectory.make("footprint-profiling-\(lines)")
            var environment = try Self.environment(profiling: true, in: directory)
            if lines { environment["STACKSAMPLER_LINES"] = "1" }
            let run = try ChildProcess.run(try TestProgram.crash.executable(), ["maps"], environment: environment, in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let modules = Self.modules(in: run.stdout)
            #expect(modules.contains("libStackSamplerPreloadSwift.so"), "\(modules)")
            let unwanted = ["libbz2", "libdw", "libelf", "libz."]
            #expect(modules.filter { module in unwanted.contains { module.hasPrefix($0) } } == [], "\(modules)")
        }

        @Test("the program sees its environment as it was: the backtracer setting was only for the profiler's load")
        func environmentUnchanged() throws {
            let directory = try ScratchDirectory.make("environment")
            let program = try TestProgram.crash.executable()
            // %p: no owner marker is added for descendants.
            let settings = ["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_OUTPUT": directory + "/profile-%p.folded"]
            let plain = try ChildProcess.run(program, ["environment"], environment: ["LD_PRELOAD": "", "STACKSAMPLER_OUTPUT": ""], in: directory)
            let run = try ChildProcess.run(program, ["environment"], environment: settings, in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let variables = { (result: ProcessResult) in
                // Sorted: the harness builds each child's environment in no fixed order.
                result.stdout.split(separator: "\n").filter { !$0.hasPrefix("environment LD_PRELOAD=") && !$0.hasPrefix("environment STACKSAMPLER_OUTPUT=") }.sorted()
            }
            #expect(variables(run) == variables(plain), "\(plain)\n\(run)")
            #expect(!run.stdout.contains("SWIFT_BACKTRACE"), "\(run)")
        }

        @Test("a Swift program keeps its own crash handlers under the profiler")
        func swiftProgramKeepsHandlers() throws {
            let directory = try ScratchDirectory.make("swift-signals")
            let program = try TestProgram.swiftSignals.executable()
            let plain = try ChildProcess.run(program, in: directory)
            let run = try ChildProcess.run(program, environment: try Self.environment(profiling: true, in: directory), in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            #expect(try Self.caught(Self.crashSignals, in: run.stdout) == Self.caught(Self.crashSignals, in: plain.stdout), "\(plain)\n\(run)")
        }

        @Test("the Swift part defines no engine symbol: it binds to the preload library's one engine")
        func oneEngine() throws {
            let swiftPart = BuildProducts.directory + "/libStackSamplerPreloadSwift.so"
            let preload = try BuildProducts.preloadLibrary()
            let symbols = { (options: [String], library: String) throws -> Set<String> in
                let listed = try ChildProcess.run("nm", ["-D"] + options + [library], in: ScratchDirectory.run)
                #expect(listed.termination == .exited(0), "\(listed)")
                return Set(listed.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
            }
            let engine = try symbols(["--defined-only"], preload).filter { $0.hasPrefix("ss_") }
            #expect(engine.contains("ss_engine_init"), "\(engine.sorted())")
            #expect(try symbols(["--defined-only"], swiftPart).intersection(engine).isEmpty)
            #expect(try symbols(["--undefined-only"], swiftPart).contains("ss_engine_init"))
        }

        /// Whether this run can make a setuid program `nobody` can run: as root, with a user
        /// `nobody`, in a scratch directory on a file system that honours the setuid bit, every
        /// directory above it searchable by others (the program and its library are copied there,
        /// since the build directory, in a checkout under a 0700 home, may not be).
        static var canMakeSetuidPrograms: Bool {
            var status = statvfs()
            return getuid() == 0 && getpwnam("nobody") != nil && statvfs(ScratchDirectory.run, &status) == 0
                && status.f_flag & UInt(ST_NOSUID) == 0 && othersCanSearch(ScratchDirectory.run)
        }

        /// Whether every directory from `/` down to `path` is searchable by other users.
        private static func othersCanSearch(_ path: String) -> Bool {
            var directory = ""
            for component in path.split(separator: "/") {
                directory += "/" + component
                var status = stat()
                guard stat(directory, &status) == 0, status.st_mode & S_IXOTH != 0 else { return false }
            }
            return true
        }

        @Test("in secure-execution mode (setuid) the library and the C API do nothing and say so once",
              .enabled(if: canMakeSetuidPrograms,
                       "needs root, a user nobody, and a scratch directory ($TMPDIR) that others may search on a file system without nosuid"))
        func secureExecution() throws {
            let directory = try ScratchDirectory.make("secure-execution")
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
            // Run as nobody, the program's loader must reach the preload library: both are placed
            // in this directory, which nobody may search, the program linked to the copy there.
            let library = directory + "/libStackSamplerPreload.so"
            try FileManager.default.copyItem(atPath: try BuildProducts.preloadLibrary(), toPath: library)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: library)
            let program = try TestProgram.cAPI.compiled(into: directory, libraryDirectory: directory)
            let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
            // Run by root, a program setuid to nobody has real uid 0 and effective uid 65534: AT_SECURE.
            #expect(chown(program, nobody, 0) == 0 && chmod(program, 0o4755) == 0)
            let output = directory + "/unwanted.folded"
            let run = try ChildProcess.run(program, [output, output + ".pb.gz"],
                                           environment: ["STACKSAMPLER_OUTPUT": output], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let secure = try #require(try CAPI.headerConstants()["STACKSAMPLER_ERROR_SECURE_EXECUTION"])
            for call in ["stop_before_start", "start", "stop", "write"] {
                #expect(ProgramOutput.integer(call, in: run.stdout) == secure, "\(call)\n\(run)")
            }
            #expect(run.stderrLines.filter { $0.contains("secure-execution mode") }.count == 1, "\(run)")
            #expect(!FileManager.default.fileExists(atPath: output), "a profile was written")
        }
    }
}
