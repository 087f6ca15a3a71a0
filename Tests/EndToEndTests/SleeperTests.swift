import Foundation
import Testing

extension EndToEnd {
    /// Wall mode does not wake sleeping threads (no extra EINTR), and a thread that blocks
    /// SIGPROF neither stalls sampling nor goes unreported.
    @Suite struct Sleepers {
        @Test("sleeping threads see no more EINTR than without the profiler; the masked thread is named")
        func sleepersUndisturbed() throws {
            let directory = try ScratchDirectory.make("sleepers")
            let plain = try ChildProcess.run(try TestProgram.sleepers.executable(), ["1.5"], in: directory)
            let run = try ProfiledRun.preload(
                .sleepers, ["1.5"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let plainEINTR = try #require(ProgramOutput.integer("eintr", in: plain.stdout))
            let profiledEINTR = try #require(ProgramOutput.integer("eintr", in: run.process.stdout))
            let sleeps = try #require(ProgramOutput.integer("sleeps", in: run.process.stdout))
            // A sleeper is signalled while asleep only to learn where it sleeps: for its first sample,
            // and when it blocks somewhere new after running for half a period or more (here: once,
            // after its start). Two each, against one per tick (about 1500 here) for a sampler that
            // signals every thread.
            #expect(profiledEINTR <= plainEINTR + 4, "\(profiledEINTR) of \(sleeps) sleeps ended with EINTR (unprofiled: \(plainEINTR))")

            let profile = try run.profile()
            #expect(profile.inclusiveCount { $0 == "main_spin" } > 100, "the other threads were sampled at 1 kHz")
            #expect(profile.inclusiveCount { $0 == "masked_spin" } == 0)
            #expect(run.process.stderr.contains("block SIGPROF") && run.process.stderr.contains("masked"),
                    "the summary names the thread it could not sample: \(run.process.stderr)")
        }
    }
}
