import Foundation
import Testing

extension EndToEnd {
    /// Thousands of short-lived threads: no crash, and every timer the profiler created
    /// for them is deleted (the process's timer count returns to where it started). The timer
    /// engine is asked for where timers are counted.
    @Suite struct ThreadChurn {
        @Test("3000 short-lived threads leave no timers behind")
        func churn() throws {
            let directory = try ScratchDirectory.make("churn")
            let run = try ProfiledRun.preload(
                .churn, ["3000", "0.3"], settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_ENGINE": "timer"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("threads", in: run.process.stdout) == 3000)
            let start = try #require(ProgramOutput.integer("timers_start", in: run.process.stdout))
            let end = try #require(ProgramOutput.integer("timers_end", in: run.process.stdout))
            #expect(start >= 1, "the main thread's timer exists while profiling")
            #expect(end == start, "timers at start \(start), after the threads ended \(end)")
            #expect(try run.profile().totalSamples > 0)
        }

        /// A thread's timer is deleted as the thread ends, not at the sampler's next scan (100 ms
        /// later): `pthread_join` has returned for every thread when the program counts, with no wait.
        @Test("a thread's timer is gone once pthread_join returns")
        func timersDeletedAtThreadEnd() throws {
            let directory = try ScratchDirectory.make("churn-no-wait")
            let run = try ProfiledRun.preload(
                .churn, ["500", "0"], settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_ENGINE": "timer"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let start = try #require(ProgramOutput.integer("timers_start", in: run.process.stdout))
            let end = try #require(ProgramOutput.integer("timers_end", in: run.process.stdout))
            #expect(end == start, "timers at start \(start), right after the last join \(end)")
        }

        /// A tid reused by a thread that bypassed pthread_create (raw clone), before the sampler's
        /// scan saw the first one go: the exited thread's CPU timer never fires again, so the new
        /// thread used to get no sample at all. Run as pid 1 of a new pid namespace, where the
        /// program can make the kernel hand out the same tid again.
        @Test("a thread on a reused tid gets a timer or counter of its own (cpu, 10 ms)", arguments: ["timer", "perf"])
        func reusedTidIsSampled(engine: String) throws {
            let directory = try ScratchDirectory.make("tid-reuse")
            let output = ProfiledRun.freshProfilePath(for: .tidReuse, in: directory)
            let result = try ChildProcess.run(
                "/usr/bin/unshare",
                ["--pid", "--fork", "--mount-proc", "env", "LD_PRELOAD=" + (try BuildProducts.preloadLibrary()),
                 "STACKSAMPLER_OUTPUT=" + output, "STACKSAMPLER_PERIOD=10ms", "STACKSAMPLER_ENGINE=" + engine,
                 try TestProgram.tidReuse.executable()],
                in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            try #require(ProgramOutput.integer("same_tid", in: result.stdout) == 1, "the kernel did not reuse the tid: \(result)")
            let profile = try FoldedProfile(contentsOf: output)
            // 0.6 s of CPU at 10 ms is 60 samples; the scan notices the orphaned timer within 100 ms.
            #expect(profile.inclusiveCount { $0 == "reused_spin" } >= 20, "reused_spin: \(profile.inclusiveCount { $0 == "reused_spin" }) samples")
        }

        /// Threads far shorter than the period and the scheduler tick: each one's first expiry is
        /// random, so together they get a sample per period of their CPU. 200 µs each rather than
        /// threads of 100 µs doubles the expected count (about 225), so that ±25 % is about four
        /// standard deviations of the Poisson noise and the test does not fail by chance (±10 %
        /// would need ten times the threads: see the perf engine's test at 1 ms below).
        ///
        /// The perf engine's counters count user space only, and churn_fn's CPU clock also holds
        /// what the kernel did on its threads meanwhile (interrupts, faults), which varies with the
        /// machine: run by hand, churn_fn's samples against its CPU / period were 0.90-1.02 in 9 of 10
        /// runs and 0.58 in one, for the build before the wall-mode change of 2026-12-08 as for the
        /// one after (`churn 10000 0 200`, cpu 10 ms, perf engine); CI failed once at 0.747. So for
        /// that engine the tight bound is the upper one, as in the test at 1 ms below, and the lower
        /// one says the samples are there.
        @Test("10,000 threads of 200 µs get churn_fn samples within 25 % of their CPU / period (cpu, 10 ms; perf engine: no more than 25 % over)",
              arguments: ["timer", "perf"])
        func shortThreadsAreCounted(engine: String) throws {
            let share = try Self.churnShare(threads: 10_000, microseconds: 200, periodMilliseconds: 10, engine: engine)
            if engine == "perf" {
                #expect(share.ratio <= 1.25 && share.ratio >= 0.4, "\(share.detail)")
            } else {
                #expect(abs(share.ratio - 1) <= 0.25, "\(share.detail)")
            }
        }

        /// Runs churn (`threads` threads of `microseconds` of CPU each) at a period of
        /// `periodMilliseconds` on `engine`: churn_fn's samples against its CPU / period; with the
        /// perf engine, whose counters count the time the host stole from the threads, against their
        /// CPU and that time (`StolenTime`: in CI, with a quarter of the cores stolen, 280 samples
        /// came for 224 periods of CPU, 2,302 for 2,057).
        static func churnShare(threads: Int, microseconds: Int, periodMilliseconds: Int, engine: String) throws -> (ratio: Double, detail: String) {
            let directory = try ScratchDirectory.make("churn-share")
            let stolen = StolenTime()
            let run = try ProfiledRun.preload(
                .churn, [String(threads), "0", String(microseconds)],
                settings: ["STACKSAMPLER_PERIOD": "\(periodMilliseconds)ms", "STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_ENGINE": engine],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let cpu = try #require(ProgramOutput.integer("churn_cpu_ns", in: run.process.stdout))
            let steal = engine == "perf" ? min(stolen.share, 0.5) : 0
            let expected = Double(cpu) / (1 - steal) / Double(periodMilliseconds * 1_000_000)
            let samples = Double(try run.profile().inclusiveCount { $0 == "churn_fn" })
            return (samples / expected, "churn_fn samples \(samples), CPU / period \(expected) (\(Int(steal * 100)) % of the time stolen, counted in)\n\(run.process.stderr)")
        }

        /// The perf engine's counters re-arm with their random first period until the handler has
        /// set the whole one, so a counter whose first period was a few tens of µs overflowed again
        /// before the first signal arrived: those leftovers over-counted short threads (+21 and +26 %
        /// here before they were dropped). At 1 ms, 30,000 threads of about 70 µs (50 µs asked, plus
        /// the clock reads) give about 2,000 samples: +10 % is 4.5 standard deviations. The
        /// counters count user space only, and a thread's CPU time also holds its start and exit in
        /// the kernel, whose share grows when other processes keep the cores busy: alone the ratio
        /// is 0.95-1.04, in two full suites run in parallel on the 2 cores it was 0.83 and 0.59, and
        /// alone on a machine whose kernel made thread starts and exits dear (60-80 % of these
        /// threads' CPU in the kernel, as the summary's counts line said) 0.25-0.36, for the build
        /// before as for the one after (2026-11-29). So no more than its CPU allows is the tight
        /// bound, and the lower one only says the samples are there.
        @Test("30,000 threads of 50 µs get churn_fn samples no more than 10 % over their CPU / period (cpu, perf engine, 1 ms)")
        func shortThreadsAreNotOverCounted() throws {
            let share = try Self.churnShare(threads: 30_000, microseconds: 50, periodMilliseconds: 1, engine: "perf")
            #expect(share.ratio <= 1.1 && share.ratio >= 0.15, "\(share.detail)")
        }

        /// The profiler takes one thread-specific key, as its first thread starts (the ledger's bound);
        /// a program that took every key before that leaves it none, and loses nothing.
        @Test("a program that takes every thread-specific key gets all but the profiler's one, or all if it took them first; its threads run and are sampled",
              arguments: ["cpu", "wall"], [false, true])
        func threadSpecificKeys(mode: String, keysFirst: Bool) throws {
            let directory = try ScratchDirectory.make("key-hoarder-\(mode)")
            let arguments = keysFirst ? ["keys-first"] : []
            let plain = try ChildProcess.run(try TestProgram.keyHoarder.executable(), arguments, in: directory)
            let unprofiled = try #require(ProgramOutput.integer("keys", in: plain.stdout), "\(plain)")
            #expect(plain.termination == .exited(0) && plain.stdout.contains("eagain 1"), "\(plain)")
            let run = try ProfiledRun.preload(.keyHoarder, arguments, settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                                              in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("keys", in: run.process.stdout) == (keysFirst ? unprofiled : unprofiled - 1), "\(run.process.stdout)")
            #expect(run.process.stdout.contains("eagain 1") && run.process.stdout.contains("threads ok"), "\(run.process.stdout)")
            #expect(try run.profile().inclusiveCount { $0 == "use_every_key" } > 0, "the threads made after the keys ran out are sampled")
        }
    }
}
