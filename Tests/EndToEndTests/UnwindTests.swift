import Foundation
import Testing

extension EndToEnd {
    /// The engine's own unwinder: no per-thread preparation (threads that existed before
    /// `start` get whole stacks), no lock or module read in the handler (a program's own
    /// libunwind, modules closed behind the profiler's back), and little stack (an 8 KiB
    /// alternate signal stack).
    @Suite struct Unwinding {
        /// Share of samples whose stack starts at a thread's first frame.
        static func wholeShare(_ profile: FoldedProfile) -> Double {
            let whole = profile.stacks.filter { ["_start", "__clone3"].contains($0.frames.first) }.reduce(0) { $0 + $1.count }
            return Double(whole) / Double(max(1, profile.totalSamples))
        }

        @Test("threads that existed before start get whole stacks (C API)",
              arguments: [TestProgram.threadsBeforeStart, .threadsBeforeStartNoFramePointers])
        func threadsBeforeStartC(program: TestProgram) throws {
            let directory = try ScratchDirectory.make("before-start-\(program.rawValue)")
            let folded = directory + "/profile.folded"
            let result = try ChildProcess.run(try program.executable(), [folded], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(ProgramOutput.integer("start", in: result.stdout) == 0, "\(result)")
            let profile = try FoldedProfile(contentsOf: folded)
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }
            #expect(Self.wholeShare(profile) >= 0.99, "\(stacks)")
            let workers = profile.inclusiveCount { $0 == "worker_main" }
            #expect(workers >= 100, "worker samples with worker_main: \(workers)\n\(stacks)")
            #expect(profile.inclusiveCount { $0 == "main_spin" } >= 20, "\(stacks)")
            #expect(profile.stacks.filter { $0.frames.contains("spin_leaf") }.allSatisfy {
                $0.frames.prefix(3) == ["__clone3", "start_thread", "worker_main"]
            }, "\(stacks)")
        }

        @Test("threads that existed before start get whole stacks (Swift, Dispatch workers)")
        func threadsBeforeStartSwift() throws {
            let directory = try ScratchDirectory.make("before-start-swift")
            let folded = directory + "/profile.folded"
            let result = try ChildProcess.run(try TestProgram.threadsBeforeStartSwift.executable(), [folded], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let profile = try FoldedProfile(contentsOf: folded)
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }
            #expect(Self.wholeShare(profile) >= 0.99, "\(stacks)")
            let dispatch = profile.stacks.filter { $0.frames.contains { $0.hasPrefix("dispatchSpin") } }
            #expect(dispatch.reduce(0) { $0 + $1.count } >= 50, "\(stacks)")
            // libdispatch's table is compiled by the sampler thread as it starts (only core modules are
            // compiled on the caller's thread): a sample before then ends early, counted.
            let whole = dispatch.filter { $0.frames.prefix(2) == ["__clone3", "start_thread"] }.reduce(0) { $0 + $1.count }
            #expect(Double(whole) >= 0.97 * Double(dispatch.reduce(0) { $0 + $1.count }), "\(stacks)")
            #expect(profile.inclusiveCount { $0.hasPrefix("threadSpin") } >= 20, "\(stacks)")
        }

        @Test("threads with an 8 KiB alternate signal stack are sampled at 1 ms without a crash")
        func smallAlternateStack() throws {
            let directory = try ScratchDirectory.make("small-altstack")
            let run = try ProfiledRun.preload(
                .smallAltstack, ["1"],
                settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout.contains("done"), "\(run.process)")
            let profile = try run.profile()
            #expect(profile.totalSamples >= 500, "\(run.process.stderr)")
            // Outside the program's own handler, samples run on the thread's stack and are whole.
            let recursing = profile.stacks.filter { $0.frames.last == "recurse" }
            #expect(recursing.reduce(0) { $0 + $1.count } >= 200, "\(profile.stacks.map(\.frames))")
            #expect(recursing.allSatisfy { ["_start", "__clone3"].contains($0.frames.first) }, "\(profile.stacks.map(\.frames))")
        }

        /// The summary's count of leaf-only samples.
        static func leafOnlySamples(_ stderr: String) -> Int? {
            guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("stacksampler: lost: ") }),
                  let range = line.range(of: " leaf-only") else { return nil }
            return Int(line[..<range.lowerBound].split(separator: " ").last ?? "")
        }

        /// small_stack's thread works with about 5 KiB of its stack left (a guard page below), where
        /// its own 1 kHz SIGALRM handler runs, with the kernel's frame of 3.5 KiB. The profiler's
        /// handler knows the thread's stack bounds and takes a leaf-only sample there, counted.
        /// Before: SIGSEGV in 10 of 10 runs in each mode (the handler's first calls went through the
        /// loader's lazy resolver, which saves the vector registers on the stack: 3 KiB).
        @Test("a thread with 5 KiB of stack left and a 1 kHz handler of its own is sampled at 1 ms, leaf-only there",
              arguments: ["wall", "cpu"])
        func littleStackLeft(mode: String) throws {
            let directory = try ScratchDirectory.make("small-stack-\(mode)")
            let run = try ProfiledRun.preload(
                .smallStack, ["0.5"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            let left = try #require(ProgramOutput.integer("left", in: output), "\(run.process)")
            #expect(left >= 4096 && left <= 6144, "\(output)")
            #expect((ProgramOutput.integer("alarms", in: output) ?? 0) > 0, "\(output)")
            let leafOnly = try #require(Self.leafOnlySamples(run.process.stderr), "\(run.process.stderr)")
            #expect(leafOnly > 0, "\(run.process.stderr)")
            // Each is shown as what it is: the interrupted PC under a marker, never as a thread's root.
            let profile = try run.profile()
            let marked = profile.stacks.filter { $0.frames.first == "[leaf only]" }
            #expect(marked.reduce(0) { $0 + $1.count } == leafOnly && marked.allSatisfy { $0.frames.count == 2 },
                    "\(profile.stacks.filter { $0.frames.first?.hasPrefix("[") == true })\n\(run.process.stderr)")
        }

        /// The same at the end of the main thread's stack, which grows on demand: its end is learnt
        /// from its mapping and RLIMIT_STACK (512 KiB here). Before: SIGSEGV in both modes.
        @Test("the main thread with 5 KiB left of a 512 KiB stack limit is sampled at 1 ms, leaf-only there",
              arguments: ["wall", "cpu"])
        func mainThreadStackEnd(mode: String) throws {
            let directory = try ScratchDirectory.make("main-stack-\(mode)")
            let output = ProfiledRun.freshProfilePath(for: .smallStack, in: directory)
            let result = try ChildProcess.run(
                "/usr/bin/prlimit",
                ["--stack=524288", "env", "LD_PRELOAD=" + (try BuildProducts.preloadLibrary()), "STACKSAMPLER_OUTPUT=" + output,
                 "STACKSAMPLER_MODE=" + mode, "STACKSAMPLER_PERIOD=1ms", "STACKSAMPLER_SUMMARY=-",
                 try TestProgram.smallStack.executable(), "0.3", "5120", "main"],
                in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let left = try #require(ProgramOutput.integer("left", in: result.stdout), "\(result)")
            #expect(left >= 4096 && left <= 6144, "\(result.stdout)")
            #expect((ProgramOutput.integer("alarms", in: result.stdout) ?? 0) > 0, "\(result.stdout)")
            let leafOnly = try #require(Self.leafOnlySamples(result.stderr), "\(result.stderr)")
            #expect(leafOnly > 0, "\(result.stderr)")
        }

        /// The handler's own stack use, walking: small_stack with 64 KiB left poisons its stack and
        /// finds the deepest byte written below its working frame (the kernel's frame, then the
        /// handler's or the program's SIGALRM handler's); the kernel's frame is what the program's
        /// handler finds. The rest must fit the 1 KiB the handler reserves for its walk (measured:
        /// 608-672 bytes; 3,544 before, through the lazy resolver).
        @Test("the handler's walk fits in the stack it reserves for it", arguments: ["wall", "cpu"])
        func handlerStackUse(mode: String) throws {
            let directory = try ScratchDirectory.make("handler-stack-\(mode)")
            let run = try ProfiledRun.preload(
                .smallStack, ["0.3", "65536"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            let below = try #require(ProgramOutput.integer("below_leaf", in: output), "\(run.process)")
            let kernel = try #require(ProgramOutput.integer("kernel_frame", in: output), "\(run.process)")
            #expect(kernel > 0 && below - kernel <= 1024, "deepest use \(below) bytes below the working frame, the kernel's frame \(kernel): \(output)")
            #expect(Self.leafOnlySamples(run.process.stderr) == 0, "\(run.process.stderr)")
        }

        @Test("a Rust program (8 KiB alternate signal stacks on every thread) is sampled at 1 ms with whole stacks")
        func rustThreads() throws {
            let directory = try ScratchDirectory.make("rust-threads")
            let run = try ProfiledRun.preload(
                .rustThreads, ["1"],
                settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout.contains("done"), "\(run.process)")
            let profile = try run.profile()
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }
            #expect(profile.inclusiveCount { $0.contains("leaf") } >= 300, "\(stacks)")
            #expect(Self.wholeShare(profile) >= 0.99, "\(stacks)")
        }

        /// The deadlock this guards against (a handler unwinding with the program's libunwind)
        /// struck about 4 runs in 10, mostly early: 12 short runs leave it no chance to hide.
        @Test("a program that uses libunwind itself beside dl_iterate_phdr callbacks finishes, 12 runs in a row")
        func programsOwnLibunwind() throws {
            let directory = try ScratchDirectory.make("own-libunwind")
            var samples = 0
            for _ in 0..<12 {
                let run = try ProfiledRun.preload(
                    .ownLibunwind, ["300"],
                    settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
                #expect(run.process.termination == .exited(0), "\(run.process)")
                #expect(ProgramOutput.integer("backtraces", in: run.process.stdout) == 300, "\(run.process)")
                #expect(ProgramOutput.integer("iterations", in: run.process.stdout) == 300, "\(run.process)")
                samples += try run.profile().totalSamples
            }
            #expect(samples > 0)
        }

        @Test("modules closed through libc's own dlclose while sampling at 1 kHz")
        func modulesClosedBehindTheProfiler() throws {
            let directory = try ScratchDirectory.make("hidden-dlclose")
            let plugin = try TestProgram.plugin.executable()
            let run = try ProfiledRun.preload(
                .hiddenDlclose, [plugin, "6"],
                settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("closed", in: run.process.stdout) == 6, "\(run.process)")
            #expect(try run.profile().totalSamples > 0)
        }
    }
}
