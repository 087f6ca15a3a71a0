import Foundation
import Testing

extension EndToEnd {
    /// A sleeping thread is walked from the stack pointer and program counter /proc gives, without
    /// a signal; code built with frame pointers needs rbp as well, which the C library's blocking
    /// calls save on the way in (Sources/CEngine/wait_frames.c). The same program built with and
    /// without frame pointers, in every setting: its threads' sleeps are whole in both.
    @Suite struct SleepingStacks {
        /// The blocking calls the program's threads sleep in, by the prefix of their functions.
        static let waits = ["nap", "poll", "epoll", "read", "futex", "ppoll", "pwait"]

        @Test("threads asleep in nanosleep, poll, epoll_wait, read, a condition variable, ppoll and epoll_pwait: whole stacks with and without frame pointers",
              arguments: [TestProgram.fpSleepers, .fpSleepersNoFramePointers], [("wall", "10ms"), ("wall", "1ms")])
        func wholeWithAndWithoutFramePointers(program: TestProgram, sampling: (mode: String, period: String)) throws {
            // 1 ms as root and with perf_event_open refused (the two ways a sleep's start is
            // known: its switch record, or a look through /proc); 10 ms in all three settings.
            let settings: [RunSetting] = sampling.period == "1ms" ? [.root, .perfRefused] : RunSetting.allCases
            for setting in settings {
                let directory = try ScratchDirectory.make("sleeping-stacks")
                let seconds = 2.0
                let run = try ProfiledRun.preload(
                    program, [String(seconds)],
                    settings: ["STACKSAMPLER_MODE": sampling.mode, "STACKSAMPLER_PERIOD": sampling.period, "STACKSAMPLER_SUMMARY": "-"],
                    setting: setting, in: directory)
                #expect(run.process.termination == .exited(0), "\(setting): \(run.process)")
                let profile = try run.profile()
                let ticks = seconds * 1000 / (sampling.period == "1ms" ? 1 : 10)
                for wait in Self.waits {
                    let leaf = "\(wait)_leaf"
                    let inWait = profile.stacks.filter { $0.frames.contains(leaf) }
                    let samples = inWait.reduce(0) { $0 + $1.count }
                    // Whole: from the thread's start through its function and the two calls into the wait.
                    let cut = inWait.filter { stack in
                        guard let at = stack.frames.firstIndex(of: leaf), at >= 2, stack.frames.contains("start_thread") else { return true }
                        return stack.frames[at - 1] != "\(wait)_middle" || !stack.frames[..<(at - 1)].contains("\(wait)_thread")
                    }
                    let cutSamples = cut.reduce(0) { $0 + $1.count }
                    print("sleeping stacks, \(program.rawValue) \(sampling.period), \(setting): \(leaf) \(samples) samples, \(cutSamples) cut")
                    // The thread sleeps nearly all the time: most of its ticks are in the wait
                    // (a busy machine loses some, counted in the summary).
                    #expect(Double(samples) > 0.25 * ticks, "\(setting): \(leaf) has \(samples) samples for some \(Int(ticks)) ticks\n\(run.process.stderr)")
                    #expect(cutSamples <= samples / 100, "\(setting): \(cutSamples) of \(leaf)'s \(samples) samples are cut, e.g. \(cut.first.map { $0.frames.joined(separator: ";") } ?? "")")
                }
            }
        }

        @Test("the blocking calls passed through the profiler's frames return and set errno as without it, a seventh argument on the stack included")
        func callsAsWithoutTheProfiler() throws {
            let directory = try ScratchDirectory.make("wait-calls")
            let plain = try ChildProcess.run(try TestProgram.waitCalls.executable(), [], in: directory)
            #expect(plain.termination == .exited(0), "without the profiler: \(plain)")
            let run = try ProfiledRun.preload(.waitCalls, settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("checked", in: run.process.stdout) == ProgramOutput.integer("checked", in: plain.stdout))
        }
    }
}
