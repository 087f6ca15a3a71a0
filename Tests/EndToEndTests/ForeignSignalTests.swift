import Foundation
import Testing

extension EndToEnd {
    /// A program that uses the profiler's signal for itself keeps working.
    @Suite struct ForeignSignal {
        /// own_sigprof installs a SIGPROF handler and ITIMER_PROF in main. Under the profiler in
        /// cpu mode its handler must still be called about as often as the timer asks (not 0,
        /// and not also for the profiler's signals) and sigaction must report it back. The
        /// profiler may then sample anyway or state that it cannot; which is its choice.
        @Test("own SIGPROF handler keeps working under cpu mode")
        func ownSigprofHandler() throws {
            let directory = try ScratchDirectory.make("own-sigprof")
            let run = try ProfiledRun.preload(
                .ownSigprof, ["1"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "10ms"], in: directory)
            let output = run.process.stdout
            #expect(run.process.termination == .exited(0), "exit 3: handler never called, exit 4: sigaction hid it. \(run.process)")
            #expect(output.contains("handler_reported yes"), "sigaction did not report the program's handler: \(run.process)")

            let ticks = try #require(ProgramOutput.integer("ticks", in: output), "\(run.process)")
            let expected = try #require(ProgramOutput.integer("expected", in: output), "\(run.process)")
            #expect(ticks > 0, "\(run.process)")
            #expect(Double(ticks) >= 0.5 * Double(expected) && Double(ticks) <= 1.5 * Double(expected) + 5,
                    "handler called \(ticks) times where ITIMER_PROF gives about \(expected)")

            let sampled = try run.wroteProfile && run.profile().totalSamples > 0
            let refusalStated = run.process.stderr.localizedCaseInsensitiveContains("SIGPROF")
            #expect(sampled || refusalStated, "neither a profile with samples nor a word about SIGPROF on stderr: \(run.process)")
        }
    }
}
