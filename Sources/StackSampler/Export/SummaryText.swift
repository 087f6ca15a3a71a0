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
            lines.append("effective rate \(formatted(median, 1)) samples \(basis) per thread (median of \(rates.count) threads; asked \(formatted(asked, 1)))")
        }
        if overhead != Profile.Overhead() { lines.append("profiler cost: handler \(formatted(Double(overhead.handlerMedianNanoseconds) / 1000, 1)) us median, \(formatted(Double(overhead.handlerP99Nanoseconds) / 1000, 1)) us p99 per sample; sampler thread \(formatted(Double(overhead.samplerCPUNanoseconds) / 1e6, 1)) ms CPU; symbolization \(formatted(Double(overhead.symbolizationNanoseconds) / 1e6, 1)) ms, \(formatted(Double(overhead.symbolTableBytes) / 1e6, 1)) MB of tables") }
        lines.append("lost: \(losses.droppedSamples) dropped (buffer full), \(losses.truncatedSamples) truncated\(configuration.map { " at depth \($0.maxDepth)" } ?? ""), \(losses.leafOnlySamples) leaf-only (too little stack left to walk), \(losses.unwindFailures) ended early (no unwind info), \(losses.unwindFaults) unwind faults, \(losses.missedTicks) late ticks (the sampler woke late: counted at their own times from the threads' context switches), \(losses.skippedTicks) skipped ticks (stack not knowable: a sleep over before it was walked, no sample near, a thread not yet watched)")
        if let configuration, losses.countedEvents > 0 {
            let weight = max(1, configuration.sampleWeight)
            let counted = configuration.event == nil ? "\(formatted(Double(losses.countedEvents) / 1e9, 3)) s of CPU" : "\(losses.countedEvents) \(configuration.sampleType)"
            let worth = Int(UInt64(losses.countedEvents) / weight)
            let missing = worth > sampleCount ? "; the other \(worth - sampleCount) fell in the kernel, or were throttled or merged while a signal was pending" : ""
            lines.append("counters: \(counted) counted, \(worth) samples' worth, \(sampleCount) taken\(missing)")
        }
        if losses.descriptorRefusals > 0 {
            lines.append("descriptors: \(losses.descriptorRefusals) times a thread got no counter: the counters take at most a sixteenth of the file descriptor limit (ulimit -n; see engine:), or the process had reached that limit; those threads were not sampled until one was free")
        }
        if losses.overrunPeriods > 0 {
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

    private func formatted(_ value: Double, _ decimals: Int) -> String {
        decimalText(value, decimals: decimals)
    }
}
