import Foundation
import Testing

extension EndToEnd {
    /// Every thread's stack reaches its root: `_start;__libc_start_main` for the main thread,
    /// `__clone3;start_thread` for the others, on threads created after sampling started.
    @Suite struct RootFrames {
        /// Whether a stack (root first) begins with a thread's first frames.
        static func isWhole(_ frames: [String]) -> Bool {
            guard frames.count >= 2 else { return false }
            return (frames[0] == "_start" && frames[1] == "__libc_start_main")
                || (frames[0] == "__clone3" && frames[1] == "start_thread")
        }

        /// Not all of them: a sample may land in code without unwind information that no walk can
        /// leave (the C runtime's `__do_global_dtors_aux` at exit: 1 of 70 samples once), and is then
        /// marked so. So at most 1 %, or 2 samples of a short run, are not whole, and every one
        /// of those says why.
        @Test("≥ 99 % of samples (all but 2 of a short run) have whole root frames; every other stack is marked with why it stops short", arguments: [
            (TestProgram.threads, ["0.3"], "cpu"), (.threads, ["0.3"], "wall"),
            (.churn, ["3000", "0"], "cpu"), (.churn, ["3000", "0"], "wall"),
        ])
        func rootsAreWhole(program: TestProgram, arguments: [String], mode: String) throws {
            let directory = try ScratchDirectory.make("roots")
            let run = try ProfiledRun.preload(program, arguments, settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "5ms"],
                                              in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let whole = profile.stacks.filter { Self.isWhole($0.frames) }.reduce(0) { $0 + $1.count }
            let broken = profile.stacks.filter { !Self.isWhole($0.frames) }.map { "\($0.frames.joined(separator: ";")) \($0.count)" }
            #expect(profile.totalSamples > 0)
            #expect(Double(whole) >= min(0.99 * Double(profile.totalSamples), Double(profile.totalSamples - 2)),
                    "\(whole) of \(profile.totalSamples) samples whole; the others:\n\(broken.prefix(10).joined(separator: "\n"))")
            let markers: Set = ["[truncated]", "[no unwind info]", "[leaf only]", "[unwind fault]"]
            #expect(profile.stacks.allSatisfy { Self.isWhole($0.frames) || markers.contains($0.frames.first ?? "") },
                    "a stack that stops short without saying why:\n\(broken.prefix(10).joined(separator: "\n"))")
        }

        /// The preload's engine leaves the unwind tables to the sampler thread and arms the
        /// timers only once it has them, and the thread that stops the session (the exit handler)
        /// is not sampled: a short program's samples are its own (no frame of the profiler's Swift
        /// part) and whole but for the few the unwinder cannot follow (lazy binding, CRT code
        /// without unwind information at exit), which the summary counts.
        @Test("a short program's samples are its own and whole", arguments: ["cpu", "wall"])
        func shortProgramSamplesAreItsOwn(mode: String) throws {
            let directory = try ScratchDirectory.make("short-program")
            var samples = 0, whole = 0
            var profilers: [String] = []
            for _ in 0..<8 {
                let run = try ProfiledRun.preload(.split, ["0.03"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                                                  in: directory)
                #expect(run.process.termination == .exited(0), "\(run.process)")
                let profile = try run.profile()
                samples += profile.totalSamples
                whole += profile.stacks.filter { Self.isWhole($0.frames) }.reduce(0) { $0 + $1.count }
                profilers += profile.stacks.map { $0.frames.joined(separator: ";") }
                    .filter { $0.contains("StackSamplerPreloadSwift") || $0.contains("writeProfileAtExit") }
            }
            #expect(samples >= 8 * 10, "\(samples) samples in 8 runs of 30 ms at 1 ms")
            #expect(profilers.isEmpty, "the profiler's own frames: \(profilers)")
            #expect(Double(whole) >= 0.9 * Double(samples), "\(whole) of \(samples) samples whole")
        }
    }
}
