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

        /// Runs split for `seconds` of CPU at `period` in `mode` with `STACKSAMPLER_ENGINE=engine`, maybe under `deny_perf_events`.
        static func split(period: String, engine: String, mode: String = "cpu", seconds: String = "1", denied: Bool = false,
                          in directory: String) throws -> (run: ProfiledRun, rate: Double?, engine: String?) {
            let settings = ["STACKSAMPLER_PERIOD": period, "STACKSAMPLER_ENGINE": engine, "STACKSAMPLER_MODE": mode,
                            "STACKSAMPLER_SUMMARY": "-"]
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
                let perf = try Self.split(period: period, engine: "perf", in: directory)
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

        /// Wall mode is the one that runs counters when left to choose (cpu mode runs the timers).
        @Test("perf_event_open refused: auto falls back to timers and says why; perf is a clear error and the program runs")
        func refusedByTheKernel() throws {
            let directory = try ScratchDirectory.make("perf-denied")
            let automatic = try Self.split(period: "1ms", engine: "auto", mode: "wall", denied: true, in: directory)
            #expect(automatic.run.process.termination == .exited(0), "\(automatic.run.process)")
            #expect(automatic.engine?.hasPrefix("CPU-time timers (perf_event_open: Permission denied; wall mode: ") == true, "\(automatic.run.process.stderr)")
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

        /// Runs `program` under `prlimit --nofile=LIMIT`, profiled (at 1 ms in `mode`, with `settings`) or not.
        static func limited(_ program: TestProgram, _ arguments: [String], nofile limit: String, mode: String? = nil,
                            settings: [String: String] = [:], in directory: String) throws -> ProcessResult {
            var environment: [String] = []
            if let mode {
                environment = ["LD_PRELOAD=" + (try BuildProducts.preloadLibrary()),
                               "STACKSAMPLER_OUTPUT=" + ProfiledRun.freshProfilePath(for: program, in: directory),
                               "STACKSAMPLER_MODE=" + mode, "STACKSAMPLER_PERIOD=1ms", "STACKSAMPLER_SUMMARY=-"]
                environment += settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            }
            return try ChildProcess.run("/usr/bin/prlimit", ["--nofile=" + limit, "env"] + environment + [try program.executable()] + arguments,
                                        in: directory)
        }

        @Test("a process at its descriptor limit: auto runs the timers, perf counts and says the threads without a counter, and the program is unharmed")
        func descriptorLimit() throws {
            let directory = try ScratchDirectory.make("perf-ulimit")
            let automatic = try Self.limited(.churn, ["3000", "0.3"], nofile: "24:24", mode: "wall", in: directory)
            #expect(automatic.termination == .exited(0), "\(automatic)")
            #expect(ProgramOutput.integer("threads", in: automatic.stdout) == 3000)
            #expect(Self.rateAndEngine(automatic.stderr).engine == "CPU-time timers (the descriptor limit, ulimit -n, leaves room for 1 perf counters only)",
                    "\(automatic.stderr)")
            let perf = try Self.limited(.churn, ["3000", "0.3"], nofile: "64:64", mode: "cpu", settings: ["STACKSAMPLER_ENGINE": "perf"], in: directory)
            #expect(perf.termination == .exited(0), "\(perf)")
            #expect(ProgramOutput.integer("threads", in: perf.stdout) == 3000)
            #expect(Self.rateAndEngine(perf.stderr).engine?.hasSuffix("at most 4 descriptors, numbered from 60") == true, "\(perf.stderr)")
            let line = perf.stderrLines.first { $0.hasPrefix("stacksampler: descriptors: ") }
            #expect(line?.contains("a sixteenth of the file descriptor limit") == true, "\(perf.stderr)")
        }

        @Test("1000 threads at the usual limit of 1024 descriptors: the program still opens all but the counters' sixteenth, and the summary counts the threads without one")
        func headroomAtTheUsualLimit() throws {
            let directory = try ScratchDirectory.make("perf-headroom")
            let plain = try Self.limited(.fdHeadroom, ["1000", "0"], nofile: "1024:4096", in: directory)
            let profiled = try Self.limited(.fdHeadroom, ["1000", "0"], nofile: "1024:4096", mode: "cpu",
                                            settings: ["STACKSAMPLER_ENGINE": "perf"], in: directory)
            #expect(plain.termination == .exited(0) && profiled.termination == .exited(0), "\(plain)\n\(profiled)")
            let alone = try #require(ProgramOutput.integer("opened", in: plain.stdout), "\(plain)")
            let opened = try #require(ProgramOutput.integer("opened", in: profiled.stdout), "\(profiled)")
            // The counters hold at most 1024 / 16 = 64 descriptors, at 960 and up; the sampler thread a few for a moment.
            #expect(opened >= alone - 64 - 8, "opened \(opened) files profiled, \(alone) unprofiled")
            #expect(Self.rateAndEngine(profiled.stderr).engine?.hasSuffix("at most 64 descriptors, numbered from 960") == true, "\(profiled.stderr)")
            #expect(profiled.stderrLines.contains { $0.hasPrefix("stacksampler: descriptors: ") }, "\(profiled.stderr)")
        }

        @Test("600 threads and 700 files: every descriptor of the program stays below FD_SETSIZE, about where it was unprofiled, and select() works",
              arguments: ["cpu", "wall"])
        func descriptorsStayBelowFDSetSize(mode: String) throws {
            let directory = try ScratchDirectory.make("perf-fd-setsize")
            let plain = try Self.limited(.fdHeadroom, ["600", "700"], nofile: "4096:4096", in: directory)
            let profiled = try Self.limited(.fdHeadroom, ["600", "700"], nofile: "4096:4096", mode: mode,
                                            settings: ["STACKSAMPLER_ENGINE": "perf"], in: directory)
            #expect(profiled.termination == .exited(0), "\(profiled)")
            #expect(ProgramOutput.integer("opened", in: profiled.stdout) == 700, "\(profiled)")
            let highest = try #require(ProgramOutput.integer("highest", in: profiled.stdout), "\(profiled)")
            let alone = try #require(ProgramOutput.integer("highest", in: plain.stdout), "\(plain)")
            // Where it was unprofiled, give or take the few descriptors the sampler thread holds for a moment (its /proc reads).
            #expect(highest < 1024 && highest <= alone + 8, "highest descriptor \(highest) profiled, \(alone) unprofiled")
            #expect(ProgramOutput.integer("select", in: profiled.stdout) == 1, "\(profiled)")
        }

        @Test("counters stay out of the program's way: none in a forked child, a file dup2()ed onto a counter's number stays open in a child, sampling goes on after the program closes every descriptor")
        func descriptors() throws {
            let directory = try ScratchDirectory.make("perf-fds")
            let run = try ProfiledRun.preload(.profilerFds, [directory], settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_ENGINE": "perf"],
                                              in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            #expect(Self.count("parent fds", in: output) == 1, "\(output)")
            #expect(Self.count("child fds", in: output) == 0, "\(output)")
            // The program's file at the counter's number: the child writes it, and it holds both lines.
            #expect(output.contains("child_write ok") && ProgramOutput.integer("shared_bytes", in: output) == 13, "\(output)")
            #expect(try String(contentsOfFile: directory + "/shared.data", encoding: .utf8) == "child\nparent\n")
            #expect(Self.ownData(in: directory), "own.data holds what the program wrote, nothing else")
            let profile = try run.profile()
            let after = profile.inclusiveCount { $0 == "after_close" }
            // 0.5 s of CPU at 1 ms: about 500 samples; the thread scan (every 100 ms) reopens the counter.
            #expect(after > 250, "\(after) samples in after_close after the program closed its descriptors")
        }

        /// bash saves every close-on-exec descriptor from 10 up around a redirection and puts it back
        /// afterwards, so a counter at a number a script uses broke its `exec N>file` (writes went to
        /// the counter: EINVAL). Counters now sit from FD_SETSIZE up, or in the table's top sixteenth.
        /// bash itself was not profiled at all before: its own setenv, which the preload library
        /// called before main, turned its getenv away from the environment.
        @Test("a bash script's exec 512>file under 1 ms cpu sampling writes its file, and bash is profiled")
        func bashRedirection() throws {
            let directory = try ScratchDirectory.make("perf-bash")
            let script = "exec 512>\(directory)/own.txt; i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; "
                + "echo line1 >&512; exec 512>&-; echo closed"
            let plain = try ChildProcess.run("/bin/bash", ["-c", script], in: directory)
            #expect(plain.termination == .exited(0) && plain.stdout == "closed\n", "\(plain)")
            let output = directory + "/bash.folded"
            let run = try ChildProcess.run("/bin/bash", ["-c", script],
                                           environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_OUTPUT": output,
                                                         "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_ENGINE": "perf", "STACKSAMPLER_SUMMARY": "-"],
                                           in: directory)
            #expect(run.termination == .exited(0) && run.stdout == "closed\n", "\(run)")
            #expect(try String(contentsOfFile: directory + "/own.txt", encoding: .utf8) == "line1\n")
            #expect(run.stderr.contains("engine: perf_event"), "\(run.stderr)")
            #expect(try FoldedProfile(contentsOf: output).inclusiveCount { $0 == "execute_command" } > 0, "bash's own functions in its profile")
        }

        /// The number profiler_fds printed after `label` (a label of more than one word).
        static func count(_ label: String, in output: String) -> Int? {
            ProgramOutput.integer("counted", in: output.replacingOccurrences(of: label, with: "counted"))
        }

        /// Whether profiler_fds's own.data holds exactly the 18,000 bytes it wrote ('a' to 'z' over and over, in pieces of 500).
        static func ownData(in directory: String) -> Bool {
            guard let data = FileManager.default.contents(atPath: directory + "/own.data"), data.count == 18_000 else { return false }
            return data.enumerated().allSatisfy { $0.element == UInt8(ascii: "a") + UInt8(($0.offset % 500) % 26) }
        }

        @Test("record of a program that closes every descriptor and writes a file of its own: the file holds only its bytes, and the raw stream is said lost",
              arguments: ["cpu", "wall"])
        func recordAfterCloseAll(mode: String) throws {
            let directory = try ScratchDirectory.make("record-close-all")
            let run = try ProfiledRun.record(.profilerFds, [directory], options: ["--mode", mode, "--period", "1ms", "--engine", "perf"],
                                             in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("own_fd", in: run.process.stdout) == 3 && ProgramOutput.integer("own_bytes", in: run.process.stdout) == 18_000,
                    "\(run.process.stdout)")
            #expect(Self.ownData(in: directory), "own.data holds what the program wrote, nothing else")
            #expect(run.process.stderrLines.contains { $0.contains("raw stream") && $0.contains("lost") }, "\(run.process.stderr)")
            #expect(try run.profile().inclusiveCount { $0 == "after_close" } > 100, "the profile written at exit still has the whole run")
        }
    }
}
