import Foundation
import Testing

extension EndToEnd {
    /// Wall mode while other processes keep every core busy: the profiled threads wait for a
    /// core part of the time, and the sampler thread is kept off its core too. Each tick must
    /// still count the stack its thread had then, and no blocking call may be cut short. One
    /// test at a time: each brings its own load.
    @Suite(.serialized) struct LoadedWall {
        /// The phases program (spins, sleeps, nested calls, each timed by the program itself):
        /// every call reconstructed, none merged or missing, within max(10 %, 2 periods) of its own
        /// timing. A thread waiting for a core is counted at the stack the kernel copied where it
        /// was preempted (PreemptionSnapshots), which the kernel gives only a user allowed to
        /// profile it; without those copies the wait goes to the sample nearest in CPU time, which
        /// near a boundary between two computing calls may lie across it (the whole wait, a few
        /// ms under this load, then goes to the wrong call: 2 of 364 calls outside in 26 runs at
        /// 1 ms, the worst a 43.8 ms spin reconstructed as 37.0 ms), and the bound at 1 ms is then
        /// max(25 %, 4 periods). Before (the sampler signalling threads it saw running): a 120 ms
        /// spin reported as 320 ms and the sleep after it missing. The program's very first call
        /// starts before the engine has its first sample (docs/limits.md): it is only checked to
        /// be not longer than it was.
        @Test("busy machine, wall 1 ms and 10 ms: every call of the phases program is found, lasting what the program measured",
              arguments: [1.0, 10.0])
        func phases(periodMilliseconds: Double) throws {
            let directory = try ScratchDirectory.make("loaded-invocations-\(Int(periodMilliseconds))")
            let tracePath = directory + "/trace.json"
            let load = try BusyCores()
            let run = try ProfiledRun.preload(
                .invocations, ["2"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "\(Int(periodMilliseconds))ms",
                           "STACKSAMPLER_INVOCATIONS": tracePath, "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            load.stop()
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let measured = try MeasuredCalls(parsing: run.process.stdout)
            let trace = try ChromeTrace(contentsOf: tracePath)
            let first = try #require(measured.durations["phase_spin_50"]?.first)
            let preemptions = KernelProfiling.preemptions(inSummary: run.process.stderr)
            let copied = KernelProfiling.allowed
            if copied {
                // Copies kept for this thread, which sleeps seldom: few waits without one (a thread
                // preempted inside the profiler's handler, whose signal frame outgrows the copy, is
                // counted at that handler's own sample).
                #expect(preemptions.atCopy > 3 * preemptions.atNearestSample, "\(preemptions)\n\(run.process.stderr)")
            }
            for (name, truth) in measured.durations.sorted(by: { $0.key < $1.key }) where name != "recurse" {
                let calls = trace.events(named: name)
                try #require(calls.count == truth.count, "\(name): \(calls.count) invocations for \(truth.count) calls")
                for (index, (call, real)) in zip(calls, truth).enumerated() {
                    let allowed = copied || periodMilliseconds >= 10 ? max(0.10 * real, 2 * periodMilliseconds) : max(0.25 * real, 4 * periodMilliseconds)
                    let error = call.milliseconds - real
                    if name == "phase_spin_50" && index == 0 {
                        #expect(error <= allowed, "the first call, \(first) ms, reconstructed as \(call.milliseconds) ms")
                        continue
                    }
                    #expect(abs(error) <= allowed,
                            "\(name) call \(index + 1): measured \(real) ms, reconstructed \(call.milliseconds) ms (allowed ±\(allowed))\n\(run.process.stderr)")
                }
            }
            #expect(trace.events(named: "recurse").count == 10 * (measured.durations["recurse"]?.count ?? 0))
        }

        /// The split program's 50/30/20 shares of its CPU time, sampled by wall ticks: a thread
        /// waiting for a core counts where it was preempted, which is, over many preemptions,
        /// where its CPU time went.
        @Test("busy machine, wall 1 ms: the 50/30/20 split within 3 percentage points")
        func split() throws {
            let directory = try ScratchDirectory.make("loaded-split")
            let load = try BusyCores()
            let run = try ProfiledRun.preload(.split, ["2"], settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms"],
                                              in: directory)
            load.stop()
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let measured = try MeasuredShares(parsing: run.process.stdout)
            let profile = try run.profile()
            let counts = SplitAttribution.functions.map { name in profile.inclusiveCount { $0 == name } }
            let samples = counts.reduce(0, +)
            try #require(samples >= 1000, "only \(samples) samples")
            for (name, count) in zip(SplitAttribution.functions, counts) {
                let truth = try #require(measured.shares[name])
                let share = Double(count) / Double(samples)
                #expect(abs(share - truth) <= 0.03, "\(name): \(SplitAttribution.percent(share)) of \(samples), measured \(SplitAttribution.percent(truth))")
            }
        }

        /// A thread's 200 us sleeps mostly end before the sampler can walk them, and woken, it
        /// waits for a core still inside the sleep: a tick there is counted with the walked sleep,
        /// or counted lost, never with a sample of the code around the sleep (the nearest in CPU
        /// time is the spin before or after it). Before: at 1 ms `spin_between_naps` got 2.4 times
        /// the ticks of its own time, most of the sleeps' (3149 ticks for 1.3 s, `short_nap` 647
        /// for 2.7 s), and nothing was counted lost.
        @Test("busy machine, wall 1 ms and 10 ms: ticks of sleeps over before they were walked are counted lost, not given to the code around them",
              arguments: [1.0, 10.0])
        func shortNaps(periodMilliseconds: Double) throws {
            let directory = try ScratchDirectory.make("loaded-naps-\(Int(periodMilliseconds))")
            let load = try BusyCores()
            let run = try ProfiledRun.preload(
                .shortNaps, ["3"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "\(Int(periodMilliseconds))ms", "STACKSAMPLER_SUMMARY": "-"],
                in: directory)
            load.stop()
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            let spinTicks = try #require(ProgramOutput.number("spin_ms", in: output)) / periodMilliseconds
            let napTicks = try #require(ProgramOutput.number("nap_ms", in: output)) / periodMilliseconds
            #expect(ProgramOutput.integer("eintr", in: output) == 0, "\(output)")
            let profile = try run.profile()
            let spun = Double(profile.inclusiveCount { $0 == "spin_between_naps" })
            let napped = Double(profile.inclusiveCount { $0 == "short_nap" })
            let stderr = run.process.stderr
            let skipped = try #require(stderr.firstMatch(of: /(\d+) skipped ticks/).flatMap { Double($0.1) }, "\(stderr)")
            print("short naps at \(periodMilliseconds) ms: spin \(spun) of \(spinTicks) ticks, nap \(napped) of \(napTicks), \(skipped) lost")
            // A fixed grid of ticks over a loop of 0.5 ms turns: a function's ticks vary like a
            // binomial count; 5 standard deviations (and 10 ticks) above its time never fail by
            // chance. Half its time more: a thread preempted in the kernel on its way into or out
            // of a sleep is counted where its last sample was (docs/limits.md), up to a fifth
            // more of the spin's ticks with other tests running beside this one.
            func allowed(_ ticks: Double) -> Double {
                let share = ticks / (spinTicks + napTicks)
                return 1.5 * ticks + 5 * (ticks * (1 - share)).squareRoot() + 10
            }
            #expect(spun <= allowed(spinTicks), "spin_between_naps: \(spun) ticks for \(spinTicks) ticks of its own time\n\(stderr)")
            #expect(napped <= allowed(napTicks), "short_nap: \(napped) ticks for \(napTicks) ticks of its own time\n\(stderr)")
            // Every tick of the loop is counted or counted lost (the rest: the program's start and end).
            let counted = Double(profile.totalSamples) + skipped
            #expect(counted >= (spinTicks + napTicks) * 0.95, "\(counted) ticks counted or lost for \(spinTicks + napTicks) in the loop\n\(stderr)")
            // The summary says why they were lost: the naps over before they were walked, a good
            // part of them. Not always the first reason: where the host steals time, a tick's CPU
            // time (its thread's at the read, less its time on a core since) lags, and more ticks
            // of the spin fall beyond its samples' reach, lost as "no sample near" (757 to 498
            // in one CI run at 1 ms, with steal up to a fifth of the cores).
            if skipped > 0 {
                let reasons = try #require(stderr.firstMatch(of: /skipped ticks \(stack not knowable: ([^)]*)\)/).map { String($0.1) }, "\(stderr)")
                let byReason = reasons.split(separator: ", ").compactMap { part -> (String, Double)? in
                    guard let space = part.firstIndex(of: " "), let ticks = Double(part[..<space]) else { return nil }
                    return (String(part[part.index(after: space)...]), ticks)
                }
                #expect(byReason.reduce(0) { $0 + $1.1 } == skipped, "the reasons add up to the ticks skipped: \(reasons)")
                let sleepsOver = byReason.first { $0.0 == "sleep over before it was walked" }?.1 ?? 0
                #expect(sleepsOver >= 0.25 * skipped, "\(reasons)")
            }
        }

        /// Threads that burn 100 us between 1 ms poll, select and epoll_wait calls see no EINTR
        /// (the sampler never signals a thread; the engine's counters signal only in user space);
        /// a function that spins, waiting for a core part of the time, is counted at the ticks of
        /// its call, within 2 % (the ticks at either end). Before: in a quarter of the runs it was
        /// counted at half or three quarters of them, its counter stopped for 500 ms because a
        /// mask check had read its signal blocked while the thread, kept off its core, was in the
        /// engine's handler. With the default engine (CPU-time timers, a signal at each scheduler
        /// tick that finds the thread running) and with the counters asked for.
        @Test("busy machine, wall 1 ms and 10 ms: no EINTR in blocking bursts; a busy call counted at the ticks it lasted (±2 %)",
              arguments: [(1.0, "auto"), (10.0, "auto"), (10.0, "perf")])
        func bursts(periodMilliseconds: Double, engine: String) throws {
            let directory = try ScratchDirectory.make("loaded-bursts-\(Int(periodMilliseconds))-\(engine)")
            let load = try BusyCores()
            let run = try ProfiledRun.preload(
                .bursts, ["4"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "\(Int(periodMilliseconds))ms", "STACKSAMPLER_SUMMARY": "-",
                           "STACKSAMPLER_ENGINE": engine],
                in: directory)
            load.stop()
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let output = run.process.stdout
            let calls = try #require(ProgramOutput.integer("bursts", in: output))
            let early = try ["eintr_poll", "eintr_select", "eintr_epoll"].reduce(0) { $0 + (try #require(ProgramOutput.integer($1, in: output))) }
            #expect(calls > 1000 && early == 0, "\(early) of \(calls) blocking calls ended with EINTR\n\(output)")

            let life = try #require(ProgramOutput.number("busy_life_ms", in: output))
            let ticks = life / periodMilliseconds
            let samples = Double(try run.profile().inclusiveCount { $0 == "busy_life" })
            print("bursts: busy_life \(samples) samples over \(life) ms (\(ticks) ticks) at \(periodMilliseconds) ms, engine \(engine)")
            #expect(samples <= ticks * 1.02 && samples >= ticks * 0.98, "busy_life: \(samples) samples over a call of \(life) ms (\(ticks) ticks)\n\(run.process.stderr)")
            if engine == "perf" {
                // The counters signal a running thread every eighth of a period of its CPU time at 10 ms,
                // and a tick takes only its last sample before the tick or its first after it: the
                // others are answered without a walk (wall_tick_grid.c), and the count above holds.
                let line = run.process.stderr.split(separator: "\n").first { $0.hasPrefix("stacksampler: unwalked: ") }
                let unwalked = line.flatMap { Int($0.split(separator: " ")[2]) } ?? 0
                print("bursts: \(unwalked) signals unwalked at 10 ms")
                #expect(Double(unwalked) >= ticks / 2, "\(unwalked) signals unwalked\n\(run.process.stderr)")
            }
        }
    }
}
