import CEngine
import Glibc

/// Turns what the sampler counted into a `Profile`: root-first stacks, thread
/// figures, losses, invocations, and a name for each unique address (symbolized once each).
enum ProfileBuilder {
    /// Stacks with their addresses named, the profiler's own frames removed.
    struct Naming {
        var stacks: [Profile.Stack]
        var frames: [UInt: SymbolizedFrame]
        /// Addresses of the profiler's thread-start frame, left out of stacks and invocations.
        var hidden: Set<UInt>
        /// The symbolizer that named them, for any further address.
        let symbolizer: Symbolizer

        /// The name of `address`, symbolizing it if no stack had it.
        func name(of address: UInt) -> String { frames[address]?.name ?? symbolizer.symbolize(address).name }
    }

    /// The profile of a session: what `sampler` counted (and `invocations` tracked), named now, ended (or snapshotted) at
    /// `endNanoseconds`. A snapshot (`isFinished` false) has no invocations (still open) and no
    /// sampler CPU time (still running).
    static func build(from counted: StackAggregator, losses: Profile.Losses, sampler: SamplerThread, symbols: SessionSymbols,
                      invocations recorder: InvocationRecorder? = nil, endNanoseconds: UInt64, isFinished: Bool = true) -> Profile {
        let stacks = counted.counts.map { key, count in
            Profile.Stack(thread: key.thread, addresses: key.frames.reversed(), count: count, isTruncated: key.truncated)
        }
        let threads = counted.threads.map { record in
            Profile.Thread(id: record.tid, name: record.name, samples: record.samples,
                           cpuNanoseconds: record.cpuNanoseconds,
                           observedNanoseconds: record.lastSeen &- max(record.firstSeen, sampler.startTime),
                           blocksSignal: record.blocksSignal, takenSamples: record.taken)
        }
        let symbolizationStart = ss_now_ns()
        let (naming, invocations, modules, profilerModules, tableBytes) = symbols.withCurrentMappings { symbolizer in
            let naming = symbolize(stacks, with: symbolizer)
            let invocations = (isFinished ? recorder : nil).map { recorder in
                Profile.Invocation.named(recorder.tracker.records, hidden: naming.hidden, name: naming.name(of:))
            } ?? []
            let map = symbolizer.moduleMap
            return (naming, invocations, map.modules(holding: naming.frames.keys), ProfilerModules.paths(in: map), symbolizer.tableBytes)
        }
        var overhead = Profile.Overhead()
        overhead.symbolizationNanoseconds = ss_now_ns() - symbolizationStart
        overhead.symbolTableBytes = tableBytes
        let timing = HandlerTiming.snapshot().since(sampler.handlerTimingAtStart)
        overhead.handlerMedianNanoseconds = timing.percentile(0.5)
        overhead.handlerP99Nanoseconds = timing.percentile(0.99)
        overhead.samplerCPUNanoseconds = isFinished ? sampler.ownCPUNanoseconds : 0
        var profile = Profile(configuration: sampler.configuration, startNanoseconds: sampler.startTime,
                              durationNanoseconds: endNanoseconds &- sampler.startTime,
                              signal: SignalNames.name(of: ss_engine_signal()), signalSubstituted: ss_engine_signal_substituted() != 0,
                              stacks: naming.stacks, threads: threads, frames: naming.frames, modules: modules,
                              losses: losses, overhead: overhead)
        profile.asyncStacks = Profile.AsyncStacks.engine(since: sampler.asyncStacksAtStart)
        profile.profilerModules = profilerModules
        profile.processID = getpid()
        profile.processName = FileIO.readText("/proc/self/comm", limit: 64).map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 } ?? ""
        profile.realtimeStartNanoseconds = realtimeNanoseconds(atMonotonic: sampler.startTime)
        profile.command = commandLine()
        profile.invocations = invocations
        profile.invocationCounts = (isFinished ? recorder?.tracker.counts : nil) ?? Profile.InvocationCounts()
        return profile
    }

    /// Names every address of `stacks` once, and drops the profiler's own thread-start frame.
    static func symbolize(_ stacks: [Profile.Stack], with symbolizer: Symbolizer) -> Naming {
        var frames: [UInt: SymbolizedFrame] = [:]
        for stack in stacks {
            for address in stack.addresses where frames[address] == nil {
                frames[address] = symbolizer.symbolize(address)
            }
        }
        let hidden = Set(frames.filter { $0.value.name == SS_THREAD_TRAMPOLINE_NAME }.keys)
        let asyncResumes = frames.contains { $0.value.isAsyncResume }
        let cleaned = hidden.isEmpty && !asyncResumes ? stacks : stacks.map { stack in
            var stack = stack
            stack.addresses.removeAll { hidden.contains($0) }
            if asyncResumes { stack.addresses = AsyncFunctions.withoutSelfResumes(stack.addresses, frames: frames) }
            return stack
        }
        return Naming(stacks: cleaned, frames: frames, hidden: hidden, symbolizer: symbolizer)
    }

    /// CLOCK_REALTIME at the moment CLOCK_MONOTONIC read `monotonic` (assuming no clock step since).
    static func realtimeNanoseconds(atMonotonic monotonic: UInt64) -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let realtime = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        return realtime &- (ss_now_ns() &- monotonic)
    }

    /// This process's command line, arguments separated by spaces.
    static func commandLine() -> String {
        let raw = FileIO.readText("/proc/self/cmdline") ?? ""
        return raw.split(separator: "\0").joined(separator: " ")
    }
}
