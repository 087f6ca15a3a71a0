import Foundation
import Testing

extension EndToEnd {
    /// cpu mode keeps its meaning at every period: a thread's time in the kernel (its system
    /// calls) is in the profile at 1 ms as at 10 ms, whichever engine runs, or the summary says
    /// what is missing and how much.
    @Suite struct KernelTime {
        /// Processes that keep every core busy until stopped, and in any case for at most a minute
        /// of CPU each (the kernel kills them then: the runner's signal mask, which they inherit,
        /// may block SIGTERM, so they are stopped with SIGKILL).
        final class BusyCores {
            private let processes: [Process]

            init() throws {
                processes = try (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: "/bin/sh")
                    process.arguments = ["-c", "ulimit -t 60; while :; do :; done"]
                    try process.run()
                    return process
                }
            }

            deinit {
                for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
                for process in processes { process.waitUntilExit() }
            }
        }

        /// What one run of `syscalls` gave: its profile's share of `read_zero` among the two
        /// functions, the share it measured itself, its kernel share (getrusage), and the summary.
        struct Split {
            let profiled: Double
            let measured: Double
            let kernel: Double
            let samples: Double
            let process: ProcessResult

            /// How many samples of one period the profile's shares are as precise as: the summary
            /// says so when samples stand for several periods (a thread the scheduler kept off the
            /// ticks for 90 ms of its CPU gets one sample worth 90); else the samples taken, from the
            /// summary's effective rate and the CPU the program was asked to use.
            init(_ run: ProfiledRun, seconds: Double) throws {
                process = run.process
                let profile = try run.profile()
                let reading = Double(profile.inclusiveCount { $0 == "read_zero" })
                let spinning = Double(profile.inclusiveCount { $0 == "spin_user" })
                profiled = reading + spinning > 0 ? reading / (reading + spinning) : 0
                measured = try #require(try MeasuredShares(parsing: run.process.stdout).shares["read_zero"])
                let line = run.process.stdout.split(separator: "\n").first { $0.hasPrefix("kernel_share ") }
                kernel = Double(line?.split(separator: " ").last ?? "") ?? -1
                let precision = run.process.stderr.components(separatedBy: "shares are as precise as with ").dropFirst().first
                samples = precision.flatMap { Double($0.prefix { $0 != " " }) }
                    ?? (PerfEngine.rateAndEngine(run.process.stderr).rate ?? 0) * seconds
            }

            /// How far the profile may be from the program's own split: 5 points, or 4.5 standard
            /// deviations of a share near 1/2 estimated from `samples` independent samples, if wider
            /// (the program's rounds of 0.4-1.6 ms keep samples a period apart nearly independent).
            /// Under load, 20 runs at 1 ms had a standard deviation of 4.8 points where 330 samples of
            /// equal weight would give 2.7, and as the 100-170 samples the summary said give 3.8-5.
            var band: Double { max(0.05, 4.5 * (0.25 / max(1, samples)).squareRoot()) }

            /// The summary's `counts:` line.
            var counts: String {
                process.stderrLines.first { $0.hasPrefix("stacksampler: counts: ") } ?? ""
            }
        }

        static func run(period: String, engine: String, seconds: Double, setting: RunSetting = .root, in directory: String) throws -> Split {
            let settings = ["STACKSAMPLER_PERIOD": period, "STACKSAMPLER_ENGINE": engine, "STACKSAMPLER_SUMMARY": "-",
                            "STACKSAMPLER_MODE": "cpu"]
            return try Split(ProfiledRun.preload(.syscalls, [String(seconds)], settings: settings, setting: setting, in: directory), seconds: seconds)
        }

        /// The program spends half its CPU in read(2) of /dev/zero, nearly all of it in the
        /// kernel. Counters that count user space only showed that function at 3-8 % at 1 ms
        /// against 45-50 % at 10 ms; `auto` now runs the timers at every period in cpu mode, in
        /// every setting (they need no perf_event_open).
        @Test("a program half in read(2) shows it at 1 ms as at 10 ms and as it measured itself, with every core kept busy (cpu, auto)",
              arguments: RunSetting.allCases)
        func systemCallShareAtEveryPeriod(setting: RunSetting) throws {
            let directory = try ScratchDirectory.make("kernel-time")
            let busy = try BusyCores()
            let coarse = try Self.run(period: "10ms", engine: "auto", seconds: 1.5, setting: setting, in: directory)
            let fine = try Self.run(period: "1ms", engine: "auto", seconds: 2, setting: setting, in: directory)
            withExtendedLifetime(busy) {}
            for split in [coarse, fine] {
                #expect(split.process.termination == .exited(0), "\(split.process)")
                #expect(abs(split.profiled - split.measured) <= split.band,
                        "read_zero: \(split.profiled) of the samples, \(split.measured) measured, band \(split.band)\n\(split.process.stderr)")
                #expect(split.counts.contains("user space and in the kernel"), "\(split.process.stderr)")
            }
        }

        /// Perf counters count user space only, whatever the kernel allows (a counter that counts
        /// the kernel's time signals inside system calls, and a `poll` the thread enters returns
        /// EINTR): asked for by name, the summary says how much of the threads' CPU they could not see.
        @Test("--engine perf counts user space only and says how much of the CPU it could not see; auto at 1 ms runs the timers and says so")
        func userSpaceOnlyCounters() throws {
            let directory = try ScratchDirectory.make("kernel-time-counters")
            let automatic = try Self.run(period: "1ms", engine: "auto", seconds: 1, in: directory)
            #expect(automatic.process.termination == .exited(0), "\(automatic.process)")
            let engine = PerfEngine.rateAndEngine(automatic.process.stderr).engine ?? ""
            #expect(engine.hasPrefix("CPU-time timers, user and kernel time: below two scheduler ticks"), "\(automatic.process.stderr)")
            let forced = try Self.run(period: "1ms", engine: "perf", seconds: 1, in: directory)
            #expect(forced.process.termination == .exited(0), "\(forced.process)")
            // The share the counters lost, against the share of its CPU the program measured in
            // its read(2) calls (its own CPU clock around them: nearly all of it in the kernel).
            // Not getrusage's kernel share: the kernel splits user and system time by the ticks
            // that found the thread in each, a few hundred over the run, and under load that
            // split was 61 % against the 49.6 % measured.
            let prefix = "stacksampler: counts: user-space CPU time only: "
            let lost = Double(forced.counts.dropFirst(prefix.count).prefix { $0 != " " }) ?? -100
            #expect(forced.counts.hasPrefix(prefix) && abs(lost - 100 * forced.measured) <= 10,
                    "lost \(lost) %, share of its CPU in read(2) \(forced.measured), kernel share by getrusage \(forced.kernel)\n\(forced.process.stderr)")
        }
    }
}
