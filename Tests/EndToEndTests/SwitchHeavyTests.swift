import Foundation
import Testing

extension EndToEnd {
    /// Wall mode on threads that switch thousands of times a second, as a work queue's producer
    /// and consumer do: a context-switch ring costs its thread about 2 µs at every switch
    /// (`Scripts/probes/switch_ring_cost_probe.c`), so such a thread gives its ring back within
    /// milliseconds (`RingKeeping`) and is counted by looks, as where perf_event_open is refused.
    @Suite struct SwitchHeavy {
        @Test("two threads handing a token back and forth: both give their rings back and the summary says so, the sleeping main thread keeps its own, every tick of theirs is counted or counted lost",
              arguments: [RunSetting.root, .unprivileged])
        func handoffThreadsGiveTheirRingsBack(setting: RunSetting) throws {
            let seconds = 3.0
            let run = try ProfiledRun.preload(
                .handoff, [String(seconds), "20"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"],
                setting: setting, in: try ScratchDirectory.make("handoff-\(RunSetting.allCases.firstIndex(of: setting)!)"))
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let summary = run.process.stderr
            let handings = try #require(ProgramOutput.integer("handings", in: run.process.stdout), "\(run.process.stdout)")
            // 20 µs spins: tens of thousands of handings in 3 s, each a switch out and in of a thread.
            #expect(handings > 3_000, "\(handings) handings: the threads hardly switched")
            // Exactly the two handing threads: the main thread sleeps through the run in one
            // nanosleep, a few switches; the give-back holds for 10 s, longer than the run.
            let givenBack = Self.ringsGivenBack(in: summary)
            #expect(givenBack == 2, "rings given back: \(givenBack.map(String.init) ?? "none said"):\n\(summary)")

            // Each handing thread's ticks (1,000 a second each) are counted or counted lost.
            let profile = try run.profile()
            let counted = profile.inclusiveCount { $0 == "hand_back_and_forth" }
            let lost = SubsampledThreads.skippedTicks(in: summary) ?? 0
            let expected = 2 * seconds * 1_000
            #expect(Double(counted + lost) > 0.85 * expected && Double(counted) < 1.05 * expected,
                    "\(counted) ticks counted and \(lost) lost (all threads) for some \(Int(expected)) of the handing threads:\n\(summary)")
            #expect(profile.inclusiveCount { $0 == "handoff_spin" } > 0 && profile.inclusiveCount { $0 == "handoff_wait" } > 0,
                    "both the spins and the waits are in the profile")
        }

        /// The `N` of the summary's `switch rings: N times a thread gave back ...`.
        static func ringsGivenBack(in summary: String) -> Int? {
            guard let range = summary.range(of: #"switch rings: (\d+) times"#, options: .regularExpression) else { return nil }
            return Int(summary[range].split(separator: " ")[2])
        }
    }
}
