import Foundation
import Testing

extension EndToEnd {
    /// CPU attribution checked against the split program's own measurement of where its time went.
    @Suite struct SplitAttribution {
        /// The split program's three functions.
        static let functions = ["work_fifty", "work_thirty", "work_twenty"]
        /// Seconds of CPU time the split program runs for.
        static let seconds = "2"

        /// Through the preload library, in each sampling mode and where users run it.
        @Test("preload: shares match the program's measurement", arguments: [("cpu", "10ms"), ("wall", "1ms")], RunSetting.allCases)
        func preload(sampling: (mode: String, period: String), setting: RunSetting) throws {
            let directory = try ScratchDirectory.make("split-\(sampling.mode)")
            let run = try ProfiledRun.preload(
                .split, [Self.seconds], settings: ["STACKSAMPLER_MODE": sampling.mode, "STACKSAMPLER_PERIOD": sampling.period],
                setting: setting, in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            try Self.expectShares(of: run)
        }

        /// Through `stacksampler record`, which also reports a summary on stderr.
        @Test("CLI record: shares match, summary on stderr, exit 0")
        func record() throws {
            let directory = try ScratchDirectory.make("split-record")
            let run = try ProfiledRun.record(.split, [Self.seconds], options: ["--mode", "cpu", "--period", "1ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stderr.lowercased().contains("sample"), "no summary mentioning samples: \(run.process)")
            try Self.expectShares(of: run)
        }

        /// Expects each function's share of the samples in the three to be within
        /// `tolerance` of the share the program measured.
        static func expectShares(of run: ProfiledRun) throws {
            let measured = try MeasuredShares(parsing: run.process.stdout)
            let profile = try run.profile()
            let counts = functions.map { name in profile.inclusiveCount { $0 == name } }
            let samples = counts.reduce(0, +)
            try #require(samples >= 100, "only \(samples) samples in \(functions); expected hundreds")
            for (name, count) in zip(functions, counts) {
                let truth = try #require(measured.shares[name], "the program did not measure \(name)")
                let share = Double(count) / Double(samples)
                let allowed = tolerance(forShare: truth, samples: samples)
                #expect(abs(share - truth) <= allowed,
                        "\(name): \(percent(share)) of \(samples) samples, measured \(percent(truth)), allowed ±\(percent(allowed))")
            }
        }

        /// How far a sampled share may stray from the true share `share` over `samples` samples:
        /// 5 binomial standard deviations (a chance failure about once in 2 million), and never
        /// less than 10 percentage points. Tight bounds are for the benchmarks.
        static func tolerance(forShare share: Double, samples: Int) -> Double {
            max(0.10, 5 * (share * (1 - share) / Double(samples)).squareRoot())
        }

        /// `0.4321` as `43.2 %`.
        static func percent(_ fraction: Double) -> String {
            String(format: "%.1f %%", fraction * 100)
        }
    }
}
