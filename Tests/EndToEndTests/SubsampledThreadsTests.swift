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
            let run = try Self.pool(threads, for: seconds, in: "subsampled-pool")
            let summary = run.process.stderr
            #expect(ProgramOutput.integer("eintr", in: run.process.stdout) == 0, "\(run.process.stdout)")
            #expect(summary.contains("stacksampler: subsampled: "), "the profile does not say its looks were subsampled:\n\(summary)")

            let profile = try run.profile()
            let long = profile.inclusiveCount { $0 == "pool_wait_long" }, short = profile.inclusiveCount { $0 == "pool_wait_short" }
            let timedLong = try #require(ProgramOutput.number("long_ms", in: run.process.stdout))
            let timedShort = try #require(ProgramOutput.number("short_ms", in: run.process.stdout))
            let share = Double(long) / Double(max(1, long + short)), timedShare = timedLong / (timedLong + timedShort)
            print("subsampled pool: pool_wait_long \(long) and pool_wait_short \(short) ticks, share \(share); the threads timed \(timedShare)")
            // 200 looks a second for 4 s: 800 looks, each counted for the gap after it; the
            // share's spread is some 2.5 points, so 15 points either side never fails by chance.
            #expect(abs(share - timedShare) < 0.15, "pool_wait_long has \(Int(share * 100)) % of the pool's ticks; the threads timed \(Int(timedShare * 100)) %")

            // Every tick of every pool thread is counted once, or counted lost: 100 a second each.
            let counted = profile.inclusiveCount { $0 == "pool_thread" }
            let lost = try #require(Self.skippedTicks(in: summary), "no skipped ticks in the summary:\n\(summary)")
            let expected = Double(threads) * seconds * 100
            #expect(Double(counted + lost) > 0.9 * expected && Double(counted) < 1.05 * expected,
                    "\(counted) ticks counted and \(lost) lost for some \(Int(expected)) of the pool's threads")
        }

        @Test("400 pool threads with perf_event_open refused: every thread looked at within a round of looks, so every thread is in the profile and almost no tick is lost")
        func everyThreadLookedAtInARound() throws {
            // A round of looks at 400 threads is 2 s at 200 looks a second: a 3 s run has one and
            // a half. Drawn without rounds, a fifth of the threads (e^-1.5) would have no look in
            // 3 s, and their ticks would be lost.
            let threads = 400, seconds = 3.0
            let run = try Self.pool(threads, for: seconds, in: "subsampled-round")
            let summary = run.process.stderr
            let sampled = try #require(Self.threadsSampled(in: summary), "no thread count in the summary:\n\(summary)")
            #expect(sampled >= threads, "\(sampled) threads in the profile, of the pool's \(threads) and the main thread")
            let lost = try #require(Self.skippedTicks(in: summary), "no skipped ticks in the summary:\n\(summary)")
            let expected = Double(threads) * seconds * 100
            #expect(Double(lost) < 0.02 * expected, "\(lost) ticks lost of some \(Int(expected)) of the pool's threads:\n\(summary)")
        }

        /// The thread pool program with `threads` threads for `seconds`, at wall 10 ms with
        /// perf_event_open refused (no thread has a ring), in a scratch folder named `name`; it exited 0.
        static func pool(_ threads: Int, for seconds: Double, in name: String) throws -> ProfiledRun {
            let run = try ProfiledRun.preload(
                .threadPool, [String(seconds), String(threads)],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_SUMMARY": "-"],
                setting: .perfRefused, in: try ScratchDirectory.make(name))
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
