import Foundation
import Testing

extension EndToEnd {
    /// Thousands of short-lived threads: no crash, and every timer the profiler created
    /// for them is deleted (the process's timer count returns to where it started).
    @Suite struct ThreadChurn {
        @Test("3000 short-lived threads leave no timers behind")
        func churn() throws {
            let directory = try ScratchDirectory.make("churn")
            let run = try ProfiledRun.preload(
                .churn, ["3000", "0.3"], settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("threads", in: run.process.stdout) == 3000)
            let start = try #require(ProgramOutput.integer("timers_start", in: run.process.stdout))
            let end = try #require(ProgramOutput.integer("timers_end", in: run.process.stdout))
            #expect(start >= 1, "the main thread's timer exists while profiling")
            #expect(end == start, "timers at start \(start), after the threads ended \(end)")
            #expect(try run.profile().totalSamples > 0)
        }
    }
}
