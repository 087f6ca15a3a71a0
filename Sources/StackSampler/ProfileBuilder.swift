import CSupport
import Glibc

/// Turns what the sampler counted into a `Profile`: root-first stacks, thread
/// figures, losses, and a name for each unique address (symbolized once each).
enum ProfileBuilder {
    static func build(from counted: StackAggregator, sampler: SamplerThread, endNanoseconds: UInt64) -> Profile {
        var stacks = counted.counts.map { key, count in
            Profile.Stack(thread: key.thread, addresses: key.frames.reversed(), count: count, isTruncated: key.truncated)
        }
        let threads = counted.threads.map { record in
            Profile.Thread(id: record.tid, name: record.name, samples: record.samples,
                           cpuNanoseconds: record.cpuNanoseconds,
                           observedNanoseconds: record.lastSeen &- max(record.firstSeen, sampler.startTime))
        }
        let symbolizationStart = ss_now_ns()
        let modules = ModuleMap.current()
        let symbolizer = Symbolizer(modules: modules)
        var frames: [UInt: SymbolizedFrame] = [:]
        for stack in stacks {
            for address in stack.addresses where frames[address] == nil {
                frames[address] = symbolizer.symbolize(address)
            }
        }
        let profilerFrames = Set(frames.filter { $0.value.name == SS_THREAD_TRAMPOLINE_NAME }.keys)
        if !profilerFrames.isEmpty {
            stacks = stacks.map { stack in
                var stack = stack
                stack.addresses.removeAll { profilerFrames.contains($0) }
                return stack
            }
        }
        var overhead = Profile.Overhead()
        overhead.symbolizationNanoseconds = ss_now_ns() - symbolizationStart
        let timing = HandlerTiming.snapshot().since(sampler.handlerTimingAtStart)
        overhead.handlerMedianNanoseconds = timing.percentile(0.5)
        overhead.handlerP99Nanoseconds = timing.percentile(0.99)
        overhead.samplerCPUNanoseconds = sampler.ownCPUNanoseconds
        var losses = Profile.Losses()
        losses.droppedSamples = Int(ss_buffer_dropped() - sampler.droppedAtStart)
        losses.truncatedSamples = counted.truncatedSamples
        losses.leafOnlySamples = counted.leafOnlySamples
        losses.unwindFailures = counted.unwindFailures
        losses.missedTicks = sampler.missedTicks
        losses.foreignSignals = Int(ss_engine_foreign_signals() - sampler.foreignSignalsAtStart)
        return Profile(configuration: sampler.configuration, startNanoseconds: sampler.startTime,
                       durationNanoseconds: endNanoseconds &- sampler.startTime,
                       signalNumber: ss_engine_signal(), signalSubstituted: ss_engine_signal_substituted() != 0,
                       stacks: stacks, threads: threads, frames: frames, modules: modules.modules, losses: losses,
                       overhead: overhead, command: commandLine(),
                       startDateNanoseconds: realtimeNanoseconds() &- (endNanoseconds &- sampler.startTime))
    }

    /// This process's command line, arguments separated by spaces.
    private static func commandLine() -> String {
        let raw = FileIO.readText("/proc/self/cmdline") ?? ""
        return raw.split(separator: "\0").joined(separator: " ")
    }

    /// Now on the wall clock, in ns since the Unix epoch.
    private static func realtimeNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
