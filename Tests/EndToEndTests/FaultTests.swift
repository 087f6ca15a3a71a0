import Foundation
import Testing

extension EndToEnd {
    /// SIGSEGV and SIGBUS belong to the program: its handlers run, sigaction reports them,
    /// and an unhandled fault kills it as it would without the profiler. Code without
    /// unwind info, with a frame pointer into unmapped memory, is sampled without a crash.
    @Suite struct Faults {
        @Test("the program's own SIGSEGV handler runs and is reported back")
        func handledFault() throws {
            let directory = try ScratchDirectory.make("faults-handled")
            let run = try ProfiledRun.preload(.faults, ["handled"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("caught", in: run.process.stdout) == 3)
            #expect(run.process.stdout.contains("handler_reported yes"), "\(run.process)")
        }

        @Test("an unhandled fault ends the program as it does without the profiler")
        func unhandledFault() throws {
            let directory = try ScratchDirectory.make("faults-unhandled")
            let plain = try ChildProcess.run(try TestProgram.faults.executable(), ["unhandled"], in: directory)
            let run = try ProfiledRun.preload(.faults, ["unhandled"], in: directory)
            #expect(plain.termination == .signaled(SIGSEGV), "\(plain)")
            #expect(run.process.termination == plain.termination, "\(run.process)")
        }

        @Test("code in anonymous memory with a broken frame pointer is sampled safely", arguments: ["cpu", "wall"])
        func brokenStack(mode: String) throws {
            let directory = try ScratchDirectory.make("faults-jit-\(mode)")
            let run = try ProfiledRun.preload(
                .faults, ["jit", "1"],
                settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout.contains("jit done"))
            let profile = try run.profile()
            let anonymous = profile.selfCount { $0.hasPrefix("[anon]") }
            #expect(anonymous > profile.totalSamples / 2, "most samples are in the anonymous code: \(anonymous) of \(profile.totalSamples)")
        }
    }
}
