import Foundation
import Testing

extension EndToEnd {
    /// cpu mode's perf_event engine: task-clock counters that overflow at any period, each
    /// signalling its own thread; chosen automatically, refused cleanly, out of the program's way.
    @Suite struct PerfEngine {
        /// The summary's `effective rate` (samples per CPU-second per thread) and `engine:` lines.
        static func rateAndEngine(_ stderr: String) -> (rate: Double?, engine: String?) {
            var rate: Double?, engine: String?
            for line in stderr.split(separator: "\n") {
                if line.hasPrefix("stacksampler: effective rate ") {
                    rate = Double(line.dropFirst("stacksampler: effective rate ".count).prefix { $0 != " " })
                }
                if line.hasPrefix("stacksampler: engine: ") { engine = String(line.dropFirst("stacksampler: engine: ".count)) }
            }
            return (rate, engine)
        }

        /// Runs split for `seconds` of CPU at `period` with `STACKSAMPLER_ENGINE=engine`, maybe under `deny_perf_events`.
        static func split(period: String, engine: String, seconds: String = "1", denied: Bool = false,
                          in directory: String) throws -> (run: ProfiledRun, rate: Double?, engine: String?) {
            let settings = ["STACKSAMPLER_PERIOD": period, "STACKSAMPLER_ENGINE": engine, "STACKSAMPLER_SUMMARY": "-"]
            let run: ProfiledRun
            if denied {
                // The launcher itself runs unprofiled: the preload comes in with the program it execs.
                let output = ProfiledRun.freshProfilePath(for: .split, in: directory)
                var environment = settings
                environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
                environment["STACKSAMPLER_OUTPUT"] = output
                let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                let process = try ChildProcess.run(try TestProgram.denyPerfEvents.executable(),
                                                   ["/usr/bin/env"] + assignments + [try TestProgram.split.executable(), seconds],
                                                   in: directory)
                run = ProfiledRun(process: process, profilePath: output)
            } else {
                run = try ProfiledRun.preload(.split, [seconds], settings: settings, in: directory)
            }
            let (rate, named) = rateAndEngine(run.process.stderr)
            return (run, rate, named)
        }

        @Test("the perf engine samples at the asked rate, above the scheduler tick; timers stay at the tick")
        func rateAboveTheTick() throws {
            let directory = try ScratchDirectory.make("perf-rate")
            for (period, asked) in [("1ms", 1000.0), ("250us", 4000.0)] {
                let perf = try Self.split(period: period, engine: "auto", in: directory)
                #expect(perf.run.process.termination == .exited(0), "\(perf.run.process)")
                #expect(perf.engine?.hasPrefix("perf_event task-clock") == true, "\(perf.run.process.stderr)")
                let rate = try #require(perf.rate, "no rate in \(perf.run.process.stderr)")
                #expect(rate > 0.85 * asked && rate < 1.1 * asked, "\(rate) samples per CPU-second at \(period)")
            }
            let timers = try Self.split(period: "1ms", engine: "timer", in: directory)
            #expect(timers.engine == "CPU-time timers (asked for)", "\(timers.run.process.stderr)")
            let rate = try #require(timers.rate)
            #expect(rate < 400, "timers fire at scheduler ticks (250 Hz here): \(rate)")
            // Each timer sample stands for the periods merged into it: the shares still hold.
            let profile = try timers.run.profile()
            #expect(abs(profile.inclusiveShare { $0 == "work_fifty" } - 0.5) < 0.1)
        }

        @Test("perf_event_open refused: auto falls back to timers and says why; perf is a clear error and the program runs")
        func refusedByTheKernel() throws {
            let directory = try ScratchDirectory.make("perf-denied")
            let automatic = try Self.split(period: "1ms", engine: "auto", denied: true, in: directory)
            #expect(automatic.run.process.termination == .exited(0), "\(automatic.run.process)")
            #expect(automatic.engine == "CPU-time timers (perf_event_open: Permission denied)", "\(automatic.run.process.stderr)")
            #expect(try automatic.run.profile().totalSamples > 100)

            let forced = try Self.split(period: "1ms", engine: "perf", seconds: "0.2", denied: true, in: directory)
            #expect(forced.run.process.termination == .exited(0), "the program runs unprofiled: \(forced.run.process)")
            #expect(forced.run.process.stdout.contains("checksum"))
            let message = forced.run.process.stderrLines.filter { $0.contains("perf") }
            #expect(message.count == 1 && message[0].contains("Permission denied") && message[0].contains("not profiled"),
                    "\(forced.run.process.stderr)")
            #expect(!forced.run.wroteProfile)
        }

        @Test("--event page-faults --event-period 1 attributes the program's page faults to the function that took them, in every format")
        func pageFaults() throws {
            let directory = try ScratchDirectory.make("perf-page-faults")
            let pprof = directory + "/faults.pb.gz"
            let run = try ProfiledRun.record(.pageFaults, [], options: ["--event", "page-faults", "--event-period", "1",
                                                                        "--buffer-size", "16384", "--max-depth", "32", "-o", pprof],
                                             in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let pages = try #require(ProgramOutput.integer("pages", in: run.process.stdout))
            let faults = try #require(ProgramOutput.integer("faults", in: run.process.stdout))
            let touched = try run.profile().inclusiveCount { $0 == "touch_pages" }
            // The kernel's page-faults counter itself counts fewer faults than getrusage reports for
            // the same thread (97.1-98.5 % of 100,000 in 3 quiet runs, 97.8 % on a fresh machine), for
            // reasons of its own: the profiler can only be held to what the counter counted. So:
            // never more samples than the faults the program measured, most of them (a wide band),
            // and, tightly, every fault the counter counted is a sample (its other faults, outside
            // `touch_pages`, are the program's start-up: a few hundred at most).
            #expect(touched <= faults && Double(touched) >= 0.9 * Double(faults),
                    "touch_pages: \(touched) samples for \(pages) pages, \(faults) faults of the thread")
            #expect(run.process.stderr.contains("cpu mode, page-faults every 1"), "\(run.process.stderr)")
            // The counters' own count is reported beside the samples taken, so any overflow lost shows.
            let counters = run.process.stderrLines.first { $0.hasPrefix("stacksampler: counters: ") } ?? ""
            let counted = Int(counters.dropFirst("stacksampler: counters: ".count).prefix { $0 != " " }) ?? 0
            #expect(counted >= touched && Double(touched) >= 0.99 * Double(counted), "\(counters)")
            if GoPprof.executable != nil {
                let raw = try GoPprof.raw(pprof, in: directory)
                #expect(raw.contains("page-faults/count"), "the pprof's sample type names the event: \(raw.prefix(300))")
            }
        }

        @Test("a hardware event the machine cannot count is a clear error, and the program runs unprofiled")
        func hardwareEventWithoutPMU() throws {
            let directory = try ScratchDirectory.make("perf-cycles")
            let run = try ProfiledRun.preload(.split, ["0.2"], settings: ["STACKSAMPLER_EVENT": "cycles", "STACKSAMPLER_EVENT_PERIOD": "1000000"],
                                              in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            // Where the machine has a PMU, cycles are sampled like any event; here (a VM) it has none.
            if run.wroteProfile {
                #expect(try run.profile().totalSamples > 0)
            } else {
                let lines = run.process.stderrLines.filter { $0.contains("cycles") }
                #expect(lines.count == 1 && lines[0].contains("cannot be counted here") && lines[0].contains("not profiled"),
                        "\(run.process.stderr)")
            }
        }

        @Test("a process at its descriptor limit: threads without a counter are counted and said, and the program is unharmed")
        func descriptorLimit() throws {
            let directory = try ScratchDirectory.make("perf-ulimit")
            let output = ProfiledRun.freshProfilePath(for: .churn, in: directory)
            let result = try ChildProcess.run(
                "/usr/bin/prlimit",
                ["--nofile=24:24", "env", "LD_PRELOAD=" + (try BuildProducts.preloadLibrary()), "STACKSAMPLER_OUTPUT=" + output,
                 "STACKSAMPLER_PERIOD=1ms", "STACKSAMPLER_SUMMARY=-", try TestProgram.churn.executable(), "3000", "0.3"],
                in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(ProgramOutput.integer("threads", in: result.stdout) == 3000)
            let line = result.stderrLines.first { $0.hasPrefix("stacksampler: descriptors: ") }
            #expect(line?.contains("file descriptor limit") == true, "\(result.stderr)")
            #expect(FileManager.default.fileExists(atPath: output))
        }

        @Test("counters stay out of the program's way: none in a forked child, and sampling goes on after the program closes every descriptor")
        func descriptors() throws {
            let directory = try ScratchDirectory.make("perf-fds")
            let run = try ProfiledRun.preload(.perfFds, [], settings: ["STACKSAMPLER_PERIOD": "1ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            #expect(ProgramOutput.integer("parent", in: output.replacingOccurrences(of: "parent perf fds", with: "parent")) == 1, "\(output)")
            #expect(ProgramOutput.integer("child", in: output.replacingOccurrences(of: "child perf fds", with: "child")) == 0, "\(output)")
            let profile = try run.profile()
            let after = profile.inclusiveCount { $0 == "after_close" }
            // 0.5 s of CPU at 1 ms: about 500 samples; the thread scan (every 100 ms) reopens the counter.
            #expect(after > 250, "\(after) samples in after_close after the program closed its descriptors")
        }
    }
}
