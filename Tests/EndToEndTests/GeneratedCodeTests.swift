import Foundation
import Testing

extension EndToEnd {
    /// Stacks through code the unwinder has no CFI for, and names as each language's tools show them.
    @Suite struct GeneratedCode {
        /// The summary's count of samples whose walk crossed JIT code by frame pointers.
        static func framePointerSamples(_ stderr: String) -> Int? {
            guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("stacksampler: frame pointers: ") }) else { return nil }
            return Int(line.dropFirst("stacksampler: frame pointers: ".count).prefix { $0.isNumber })
        }

        /// node's JIT code has no CFI: the walk ended at its first frame (2 % whole stacks, every JIT
        /// frame `[unknown]`). V8 keeps frame pointers in the code it generates and writes the names
        /// in /tmp/perf-PID.map. The loop runs 1 s of CPU in `outerLoop` -> `middleStep` -> `innerHot`
        /// (V8 may inline the two inner ones): nearly every sample is in it.
        @Test("node --perf-basic-prof: whole stacks through its JIT code, named from its perf map")
        func nodeJIT() throws {
            let directory = try ScratchDirectory.make("node-jit")
            let output = directory + "/node.folded"
            let result = try ChildProcess.run(
                "/usr/bin/node", ["--perf-basic-prof", "--no-logfile-per-isolate", "--logfile=" + directory + "/v8.log",
                                  PackagePaths.programs + "/jit_loop.js", "1"],
                environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_OUTPUT": output,
                              "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "2ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory, timeout: .seconds(240)) // 1 s of CPU took 28 s on a loaded 2-core machine
            try? FileManager.default.removeItem(atPath: "/tmp/perf-\(result.pid).map")
            #expect(result.termination == .exited(0), "\(result)")
            #expect(result.stdout.contains("done"), "\(result)")
            let profile = try FoldedProfile(contentsOf: output)
            let stacks = profile.stacks.sorted { $0.count > $1.count }.prefix(20).map { $0.frames.joined(separator: ";") + " \($0.count)" }
            #expect(profile.totalSamples >= 100, "\(result.stderr)")
            #expect(Unwinding.wholeShare(profile) >= 0.90, "\(stacks)")
            let loop = profile.inclusiveCount { $0.hasPrefix("JS:") && $0.contains("outerLoop") }
            #expect(Double(loop) >= 0.5 * Double(profile.totalSamples), "samples in outerLoop: \(loop)\n\(stacks)")
            #expect(profile.inclusiveCount { $0 == "[unknown]" } <= profile.totalSamples / 10, "\(stacks)")
            let crossed = try #require(Self.framePointerSamples(result.stderr), "\(result.stderr)")
            #expect(crossed >= loop, "\(result.stderr)")
        }

        /// Swift -O without -g gets .eh_frame for only some functions, and keeps no frame pointer in
        /// those without (they push rbp, if at all, as a plain register): the walk does not cross them
        /// by frame pointer, which would skip their caller. Every sample is whole or counted as ended
        /// early and marked so; `Matrix.multiply(_:)`, which has CFI, is always called from `main`.
        /// With `--leaf` the program spends about half its time in `leafSum`, which has no unwind
        /// info: those samples are the ones cut.
        @Test("Swift -O without -g: stacks whole or cut and counted, never through a guessed caller")
        func swiftWithoutDebugInfo() throws {
            let directory = try ScratchDirectory.make("swift-no-g")
            let run = try ProfiledRun.preload(
                .matrix, ["1", "--leaf"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }
            let endedEarly = try #require(Self.endedEarly(run.process.stderr), "\(run.process.stderr)")
            let whole = profile.stacks.filter { ["_start", "__clone3"].contains($0.frames.first) }.reduce(0) { $0 + $1.count }
            let marked = profile.stacks.filter { $0.frames.first == "[no unwind info]" }.reduce(0) { $0 + $1.count }
            #expect(marked == endedEarly && whole + marked == profile.totalSamples, "\(stacks)\n\(run.process.stderr)")
            // Samples in leafSum are cut there; a walk through a guessed caller would have made them whole.
            let inLeaf = profile.stacks.filter { $0.frames.contains("leafSum(_:passes:)") }
            #expect(inLeaf.reduce(0) { $0 + $1.count } > 0, "\(stacks)")
            #expect(inLeaf.allSatisfy { $0.frames == ["[no unwind info]", "leafSum(_:passes:)"] }, "\(stacks)")
            #expect(Self.framePointerSamples(run.process.stderr) == nil, "\(run.process.stderr)")
            let multiplying = profile.stacks.filter { $0.frames.contains("Matrix.multiply(_:)") }
            #expect(multiplying.reduce(0) { $0 + $1.count } > 0, "\(stacks)") // 1 s of wall time: few samples on a loaded machine
            #expect(multiplying.allSatisfy { $0.frames.prefix(5) == ["_start", "__libc_start_main", "__libc_start_call_main", "main", "Matrix.multiply(_:)"] },
                    "\(stacks)")
        }

        /// The summary's count of samples whose walk ended early.
        static func endedEarly(_ stderr: String) -> Int? {
            guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("stacksampler: lost: ") }),
                  let range = line.range(of: " ended early") else { return nil }
            return Int(line[..<range.lowerBound].split(separator: " ").last ?? "")
        }

        /// Legacy Rust symbols kept their hash (`rust_threads::leaf::h6af98f44df74ee35`, through the C++
        /// demangler), v0 symbols were not demangled at all (`_RNvCs…_12rust_threads4leaf`). The program
        /// spins for 1 s of wall time, so a loaded machine gives it few samples: any will do.
        @Test("Rust names as Rust's tools show them, legacy and v0 mangling", arguments: [TestProgram.rustThreads, .rustThreadsV0])
        func rustNames(program: TestProgram) throws {
            let directory = try ScratchDirectory.make("rust-names-\(program.rawValue)")
            let run = try ProfiledRun.preload(
                program, ["1"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let names = Set(profile.stacks.flatMap(\.frames))
            #expect(profile.inclusiveCount { $0 == "rust_threads::leaf" } > 0, "\(names.sorted())")
            #expect(profile.inclusiveCount { $0 == "rust_threads::middle" } > 0, "\(names.sorted())")
            let hashed = names.filter { $0.hasPrefix("_R") || $0.contains(/::h[0-9a-f]{16}$/) || $0.contains(/\[[0-9a-f]{16}\]/) }
            #expect(hashed.isEmpty, "\(hashed.sorted())")
        }
    }
}
