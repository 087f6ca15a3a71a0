import Foundation
import Testing

extension EndToEnd {
    /// Wall mode with more threads without a context-switch ring than it looks at at every tick
    /// (`LookSubsample`): the looks are a random subsample, and the profile still tells where the
    /// threads' time went. Run with perf_event_open refused, the setting where no thread has a
    /// ring (as root or as an ordinary user, rings cover the first 64 threads).
    @Suite struct SubsampledThreads {
        @Test("48 pool threads with perf_event_open refused: their sleeps' 3:1 split as the threads timed it, every tick counted once or lost, no EINTR, the subsample said")
        func poolSplitAsTimed() throws {
            let threads = 48, seconds = 4.0
            let run = try Self.pool(threads, for: seconds, setting: .perfRefused, in: "subsampled-pool")
            let summary = run.process.stderr
            #expect(ProgramOutput.integer("eintr", in: run.process.stdout) == 0, "\(run.process.stdout)")
            #expect(summary.contains("stacksampler: subsampled: "), "the profile does not say its looks were subsampled:\n\(summary)")

            let profile = try run.profile()
            Self.expectSplitAsTimed(profile, run)

            // Every tick of every pool thread is counted once, or counted lost: 100 a second each.
            let counted = profile.inclusiveCount { $0 == "pool_thread" }
            let lost = try #require(Self.skippedTicks(in: summary), "no skipped ticks in the summary:\n\(summary)")
            let expected = Double(threads) * seconds * 100
            #expect(Double(counted + lost) > 0.9 * expected && Double(counted) < 1.05 * expected,
                    "\(counted) ticks counted and \(lost) lost for some \(Int(expected)) of the pool's threads")
        }

        @Test("400 pool threads: every thread looked at within a round of looks, so every thread is in the profile and almost no tick is lost; as root, with rings for 64 of them that give them back as they nap, the same; the 3:1 split as timed",
              arguments: [RunSetting.perfRefused, .root])
        func everyThreadLookedAtInARound(setting: RunSetting) throws {
            // A round of looks at 400 threads is 2 s at 200 looks a second: a 3 s run has one and
            // a half. Drawn without rounds, a fifth of the threads (e^-1.5) would have no look in
            // 3 s, and their ticks would be lost.
            let threads = 400, seconds = 3.0
            let run = try Self.pool(threads, for: seconds, setting: setting, in: "subsampled-round")
            let summary = run.process.stderr
            let sampled = try #require(Self.threadsSampled(in: summary), "no thread count in the summary:\n\(summary)")
            // A thread whose one look in the run found it on a core, between two naps, waits for a
            // sample that a thread so idle never brings: its ticks are lost, and it may be missing.
            #expect(Double(sampled) >= 0.98 * Double(threads), "\(sampled) threads in the profile, of the pool's \(threads) and the main thread")
            let lost = try #require(Self.skippedTicks(in: summary), "no skipped ticks in the summary:\n\(summary)")
            let expected = Double(threads) * seconds * 100
            #expect(Double(lost) < 0.02 * expected, "\(lost) ticks lost of some \(Int(expected)) of the pool's threads:\n\(summary)")
            Self.expectSplitAsTimed(try run.profile(), run)
        }

        /// The pool's ticks split between its two sleeps as its threads timed them, within 15
        /// points: at 200 looks a second for 3-4 s, 600-800 looks, each counted for the gap after
        /// it, the share's spread is some 2.5 points, so 15 never fails by chance.
        static func expectSplitAsTimed(_ profile: FoldedProfile, _ run: ProfiledRun) {
            let long = profile.inclusiveCount { $0 == "pool_wait_long" }, short = profile.inclusiveCount { $0 == "pool_wait_short" }
            guard let timedLong = ProgramOutput.number("long_ms", in: run.process.stdout),
                  let timedShort = ProgramOutput.number("short_ms", in: run.process.stdout) else {
                Issue.record("the pool printed no times: \(run.process.stdout)")
                return
            }
            let share = Double(long) / Double(max(1, long + short)), timedShare = timedLong / (timedLong + timedShort)
            print("subsampled pool: pool_wait_long \(long) and pool_wait_short \(short) ticks, share \(share); the threads timed \(timedShare)")
            #expect(abs(share - timedShare) < 0.15, "pool_wait_long has \(Int(share * 100)) % of the pool's ticks; the threads timed \(Int(timedShare * 100)) %")
        }

        /// The thread pool program with `threads` threads for `seconds`, at wall 10 ms in
        /// `setting` (with perf_event_open refused no thread has a ring), in a scratch folder
        /// named `name`; it exited 0.
        static func pool(_ threads: Int, for seconds: Double, setting: RunSetting, in name: String) throws -> ProfiledRun {
            let run = try ProfiledRun.preload(
                .threadPool, [String(seconds), String(threads)],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_SUMMARY": "-"],
                setting: setting, in: try ScratchDirectory.make("\(name)-\(RunSetting.allCases.firstIndex(of: setting)!)"))
            #expect(run.process.termination == .exited(0), "\(run.process)")
            return run
        }

        /// The `T` of the summary's `N samples from T of U threads`.
        static func threadsSampled(in summary: String) -> Int? {
            guard let range = summary.range(of: #"samples from (\d+) of"#, options: .regularExpression) else { return nil }
            return Int(summary[range].split(separator: " ")[2])
        }

        /// The total of the summary's `N skipped ticks`.
        static func skippedTicks(in summary: String) -> Int? {
            guard let range = summary.range(of: #"(\d+) skipped ticks"#, options: .regularExpression) else { return nil }
            return Int(summary[range].split(separator: " ")[0])
        }
    }
}
