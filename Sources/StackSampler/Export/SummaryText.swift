/// The short human summary printed after a run: samples, threads, rate, losses.
extension Profile {
    /// Lines of the summary, each starting with `stacksampler:`.
    public var summary: String {
        let seconds = Double(durationNanoseconds) / 1e9
        let sampled = threads.filter { $0.samples > 0 }
        let signal = self.signal + (signalSubstituted ? " (the program handled SIGPROF when profiling started, so another signal is used)" : "")
        let settings = configuration.map { "\($0.samplingDescription), signal \(signal)" }
            ?? "sampling settings unknown"
        var lines = ["\(sampleCount) samples from \(sampled.count) of \(threads.count) threads in \(formatted(seconds, 2)) s (\(settings))"]
        if !engine.isEmpty { lines.append("engine: \(engine)") }
        let rates = sampled.map { effectiveRate(of: $0) }.filter { $0 > 0 }
        if let configuration, configuration.event == nil, !rates.isEmpty {
            let asked = 1e9 / Double(configuration.periodNanoseconds)
            let basis = configuration.mode == .cpu ? "per CPU-second" : "per second"
            let median = rates.sorted()[rates.count / 2]
            lines.append("effective rate \(formatted(median, 1)) samples \(basis) per thread (median of \(rates.count) threads; asked \(formatted(asked, 1))\(deliveryNote(sampled)))")
        }
        if let configuration, configuration.mode == .cpu, configuration.event == nil { lines.append("counts: " + countedTime(configuration)) }
        if overhead != Profile.Overhead() { lines.append("profiler cost: handler \(formatted(Double(overhead.handlerMedianNanoseconds) / 1000, 1)) us median, \(formatted(Double(overhead.handlerP99Nanoseconds) / 1000, 1)) us p99 per sample; sampler thread \(formatted(Double(overhead.samplerCPUNanoseconds) / 1e6, 1)) ms CPU; symbolization \(formatted(Double(overhead.symbolizationNanoseconds) / 1e6, 1)) ms, \(formatted(Double(overhead.symbolTableBytes) / 1e6, 1)) MB of tables") }
        lines.append("lost: \(losses.droppedSamples) dropped (buffer full), \(losses.truncatedSamples) truncated\(configuration.map { " at depth \($0.maxDepth)" } ?? ""), \(losses.leafOnlySamples) leaf-only (too little stack left to walk), \(losses.unwindFailures) ended early (no unwind info), \(losses.unwindFaults) unwind faults, \(losses.missedTicks) late ticks (the sampler woke late), \(losses.skippedTicks) skipped ticks (stack not knowable\(Self.reasons(losses.skippedTicksByReason)))")
        if let configuration, losses.countedEvents > 0 {
            let weight = max(1, configuration.sampleWeight)
            let counted = configuration.event == nil ? "\(formatted(Double(losses.countedEvents) / 1e9, 3)) s of CPU" : "\(losses.countedEvents) \(configuration.sampleType)"
            let worth = Int(UInt64(losses.countedEvents) / weight)
            let missing = worth > sampleCount ? "; the other \(worth - sampleCount) fell in the kernel, or were throttled or merged while a signal was pending" : ""
            let early = losses.earlyOverflows > 0 ? "; \(losses.earlyOverflows) overflows left over from counters' random first periods were no sample" : ""
            lines.append("counters: \(counted) counted, \(worth) samples' worth, \(sampleCount) taken\(missing)\(early)")
        }
        if losses.unwalkedSignals > 0 {
            lines.append("unwalked: \(losses.unwalkedSignals) signals answered without a walk: no tick could take their stack (a tick takes a running thread's last sample before it or its first after it)")
        }
        if losses.preemptionsAtCopy + losses.preemptionsAtNearestSample > 0 {
            lines.append("preempted: \(losses.preemptionsAtCopy) waits for a core counted at the stack the kernel copied where the thread was preempted, "
                + "\(losses.preemptionsAtNearestSample) at the thread's sample nearest in CPU time, for want of a copy (near a call's end such a wait may go to the call next to it; "
                + "copies need CAP_IPC_LOCK, and CAP_PERFMON or perf_event_paranoid 1 or less, as root has; they are not kept for threads that often switch of their own accord)")
        }
        if losses.subsampledTicks > 0 {
            lines.append("subsampled: \(losses.subsampledTicks) ticks of threads without a context-switch ring were counted with the stack of the thread's last look: "
                + "such threads were too many to look at each at every tick, so \(losses.subsampleLooksPerSecond) looks a second went to them, in rounds that look at each once, in an order drawn at random "
                + "(the profile stays unbiased; their calls' starts and ends are known to the gap between two looks)")
        }
        if losses.ringsGivenBackForSwitches > 0 {
            lines.append("switch rings: \(losses.ringsGivenBackForSwitches) times a thread gave back its context-switch ring for more than \(RingKeeping.maximumSwitchesPerSecond) switches in or out a second "
                + "(a ring costs its thread about 2 us at each); each was then counted by looks through /proc for \(RingKeeping.refusalNanoseconds / 1_000_000_000) s, as where perf_event_open is refused")
        }
        if losses.descriptorRefusals > 0 {
            lines.append("descriptors: \(losses.descriptorRefusals) times a thread got no counter: the counters take at most a sixteenth of the file descriptor limit (ulimit -n; see engine:), or the process had reached that limit; those threads were not sampled until one was free")
        }
        if losses.framePointerSamples > 0 {
            lines.append("frame pointers: \(losses.framePointerSamples) samples crossed JIT code (no unwind info) by its frame pointers, every step checked")
        }
        // Wall mode counts ticks, not periods: a timer's overrun there is only a sample the kernel took late.
        if losses.overrunPeriods > 0, configuration?.mode != .wall {
            lines.append("timer overruns: \(losses.overrunPeriods) periods the kernel noticed late were counted with the sample that followed them")
        }
        let blocking = threads.filter(\.blocksSignal)
        if !blocking.isEmpty {
            let names = blocking.prefix(8).map { "\($0.name) (tid \($0.id))" }.joined(separator: ", ")
            lines.append("unsampled: \(blocking.count) threads block \(signal) and cannot be sampled while they do: \(names)\(blocking.count > 8 ? ", …" : "")")
        }
        if losses.foreignSignals > 0 {
            lines.append("\(losses.foreignSignals) \(signal) signals that were not the profiler's were passed to the program's own handler")
        }
        if let window { lines.append(contentsOf: windowLines(window)) }
        if let line = asyncStacks.summaryLine { lines.append(line) }
        if let invocationSummary { lines.append(invocationSummary) }
        return lines.map { "stacksampler: " + $0 }.joined(separator: "\n") + "\n"
    }

    /// cpu mode: why the engine delivers fewer samples than asked, when it does (samples weighed, or
    /// counters blind to the kernel).
    private func deliveryNote(_ sampled: [Thread]) -> String {
        guard configuration?.mode == .cpu else { return "" }
        if !kernelTimeSampled { return "; per CPU-second in user space and in the kernel, and the counters sample user space only (counts:)" }
        let taken = sampled.reduce(0) { $0 + $1.takenSamples }, weighed = sampled.reduce(0) { $0 + $1.samples }
        guard taken > 0, Double(weighed) > 1.05 * Double(taken) else { return "" }
        return "; delivered at most once per scheduler tick, each sample counts for the periods of CPU it covers, "
            + "\(formatted(Double(weighed) / Double(taken), 1)) on average, so no CPU time is left out; "
            + "weighed so, shares are as precise as with \(Int(Profile.effectiveSamples(of: sampled).rounded())) samples of one period each"
    }

    /// cpu mode: what the samples stand for, and (counters of user space only) the share of the
    /// threads' CPU they could not see, counted by the counters themselves or else by the threads' CPU clocks.
    private func countedTime(_ configuration: ProfilerConfiguration) -> String {
        guard !kernelTimeSampled else { return "CPU time in user space and in the kernel (a system call is counted in the function that made it)" }
        let period = Double(max(1, configuration.periodNanoseconds))
        let cpu = losses.countedEvents > 0 ? Double(losses.countedEvents) : Double(threads.reduce(UInt64(0)) { $0 + $1.cpuNanoseconds })
        let periods = cpu / period, taken = Double(threads.reduce(0) { $0 + $1.takenSamples })
        let lost = periods > 0 ? max(0, 1 - taken / periods) : 0
        return "user-space CPU time only: \(formatted(lost * 100, 1)) % of the threads' CPU (\(Int(max(0, periods - taken))) of \(Int(periods)) periods) "
            + "was in the kernel and is not in this profile (the kernel refuses perf counters its own time here; the timer engine counts it)"
    }

    /// Continuous mode: the window, the profiler's share of a core over it, and the daemon's reports.
    private func windowLines(_ window: Window) -> [String] {
        let share = durationNanoseconds > 0 ? Double(profilerCPUNanoseconds) / Double(durationNanoseconds) * 100 : 0
        var lines = ["window \(window.index) of a continuous session (\(PeriodParser.format(nanoseconds: window.lengthNanoseconds)) each): "
            + "profiler cost \(formatted(share, 2)) % of one core (sampler thread \(formatted(Double(overhead.samplerCPUNanoseconds) / 1e6, 1)) ms, "
            + "handlers \(formatted(Double(overhead.handlerTotalNanoseconds) / 1e6, 1)) ms, naming \(formatted(Double(overhead.symbolizationNanoseconds) / 1e6, 1)) ms, "
            + "daemon on the window before \(formatted(Double(window.previousDaemonNanoseconds) / 1e6, 1)) ms)"]
        if window.droppedWindows > 0 {
            lines.append("windows dropped: \(window.droppedWindows) windows before this one were not built (the daemon was still busy with earlier ones)")
        }
        lines.append(contentsOf: window.reports)
        return lines
    }

    /// ": N reason, M reason" for skipped ticks' reasons, the largest first (ties by name); empty
    /// without any.
    static func reasons(_ byReason: [String: Int]) -> String {
        guard !byReason.isEmpty else { return "" }
        let ordered = byReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        return ": " + ordered.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }

    private func formatted(_ value: Double, _ decimals: Int) -> String {
        decimalText(value, decimals: decimals)
    }
}
