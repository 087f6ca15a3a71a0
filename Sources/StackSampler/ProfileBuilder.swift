import CSupport
import Glibc

/// Turns what the sampler counted into a `Profile`: root-first stacks, thread
/// figures, losses, and a name for each unique address (symbolized once each).
enum ProfileBuilder {
    static func build(from counted: StackAggregator, sampler: SamplerThread, endNanoseconds: UInt64) -> Profile {
        let stacks = counted.counts.map { key, count in
            Profile.Stack(thread: key.thread, addresses: key.frames.reversed(), count: count, isTruncated: key.truncated)
        }
        let threads = counted.threads.map { record in
            Profile.Thread(id: record.tid, name: record.name, samples: record.samples,
                           cpuNanoseconds: record.cpuNanoseconds,
                           observedNanoseconds: record.lastSeen &- max(record.firstSeen, sampler.startTime),
                           blocksSignal: record.blocksSignal)
        }
        let symbolizationStart = ss_now_ns()
        let modules = ModuleMap.current()
        let (named, frames, tableBytes) = symbolize(stacks, modules: modules, options: sampler.configuration.symbols)
        var overhead = Profile.Overhead()
        overhead.symbolizationNanoseconds = ss_now_ns() - symbolizationStart
        overhead.symbolTableBytes = tableBytes
        let timing = HandlerTiming.snapshot().since(sampler.handlerTimingAtStart)
        overhead.handlerMedianNanoseconds = timing.percentile(0.5)
        overhead.handlerP99Nanoseconds = timing.percentile(0.99)
        overhead.samplerCPUNanoseconds = sampler.ownCPUNanoseconds
        var profile = Profile(configuration: sampler.configuration, startNanoseconds: sampler.startTime,
                              durationNanoseconds: endNanoseconds &- sampler.startTime,
                              signalNumber: ss_engine_signal(), signalSubstituted: ss_engine_signal_substituted() != 0,
                              stacks: named, threads: threads, frames: frames, modules: modules.modules,
                              losses: sampler.losses(counted), overhead: overhead)
        profile.processID = getpid()
        profile.processName = FileIO.readText("/proc/self/comm", limit: 64).map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 } ?? ""
        return profile
    }

    /// Names every address of `stacks` once, and drops the profiler's own thread-start frame.
    static func symbolize(_ stacks: [Profile.Stack], modules: ModuleMap, options: SymbolOptions)
        -> ([Profile.Stack], [UInt: SymbolizedFrame], tableBytes: Int) {
        let symbolizer = Symbolizer(modules: modules, options: options)
        var frames: [UInt: SymbolizedFrame] = [:]
        for stack in stacks {
            for address in stack.addresses where frames[address] == nil {
                frames[address] = symbolizer.symbolize(address)
            }
        }
        let profilerFrames = Set(frames.filter { $0.value.name == SS_THREAD_TRAMPOLINE_NAME }.keys)
        guard !profilerFrames.isEmpty else { return (stacks, frames, symbolizer.tableBytes) }
        let cleaned = stacks.map { stack in
            var stack = stack
            stack.addresses.removeAll { profilerFrames.contains($0) }
            return stack
        }
        return (cleaned, frames, symbolizer.tableBytes)
    }
}
