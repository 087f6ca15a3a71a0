import CEngineHeader
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

    /// What a session counted, before any address is named: the same from a live session
    /// (`build(from:…)`) and from a raw recording (`build(from:symbols:)`), made a `Profile` by
    /// `named(_:with:)`.
    struct Counted {
        var configuration: ProfilerConfiguration
        var startNanoseconds: UInt64
        var durationNanoseconds: UInt64
        var signalNumber: Int32
        var signalSubstituted: Bool
        var processID: Int32
        var processName: String
        /// Root first; `thread` indexes `threads`.
        var stacks: [Profile.Stack]
        var threads: [Profile.Thread]
        var losses: Profile.Losses
    }

    /// `counted` with every address named once through `symbolizer` (over the counted process's
    /// mappings), the profiler's thread-start frames left out, and the modules that hold a
    /// sampled address, with their build ids.
    static func named(_ counted: Counted, with symbolizer: Symbolizer) -> (profile: Profile, naming: Naming) {
        let naming = symbolize(counted.stacks, with: symbolizer)
        var threads = counted.threads
        for index in threads.indices {
            threads[index].processID = counted.processID
            threads[index].processName = counted.processName
        }
        var profile = Profile(configuration: counted.configuration, startNanoseconds: counted.startNanoseconds,
                              durationNanoseconds: counted.durationNanoseconds,
                              signal: SignalNames.name(of: counted.signalNumber), signalSubstituted: counted.signalSubstituted,
                              stacks: naming.stacks, threads: threads, frames: naming.frames,
                              modules: symbolizer.moduleMap.modules(holding: naming.frames.keys), losses: counted.losses)
        profile.processID = counted.processID
        profile.processName = counted.processName
        return (profile, naming)
    }

    /// The profile of `span` of a session (the whole session, a continuous window, a request's
    /// span, or a snapshot): named now through `symbols`, with the span's calls when it has them.
    static func build(_ span: CountedSpan, configuration: ProfilerConfiguration, symbols: SessionSymbols) -> Profile {
        let counts = span.counts
        let counted = Counted(
            configuration: configuration, startNanoseconds: span.startNanoseconds,
            durationNanoseconds: span.endNanoseconds &- span.startNanoseconds,
            signalNumber: ss_engine_signal(), signalSubstituted: ss_engine_signal_substituted() != 0, processID: getpid(),
            processName: FileIO.processName,
            stacks: counts.counts.map { key, count in
                Profile.Stack(thread: key.thread, addresses: key.frames.reversed(), count: count, cut: key.cut)
            },
            threads: counts.threads.map { record in
                Profile.Thread(id: record.tid, name: record.name, samples: record.samples,
                               cpuNanoseconds: record.cpuNanoseconds,
                               observedNanoseconds: record.lastSeen &- max(record.firstSeen, span.startNanoseconds),
                               blocksSignal: record.blocksSignal, takenSamples: record.taken,
                               takenWeightSquares: record.takenWeightSquares)
            },
            losses: span.losses)
        let symbolizationStart = ss_now_ns()
        var (profile, invocations, profilerModules, tableBytes) = symbols.withCurrentMappings { symbolizer in
            let (profile, naming) = named(counted, with: symbolizer)
            let invocations = span.calls.map { calls in
                (closed: Profile.Invocation.named(calls.closed, hidden: naming.hidden, name: naming.name(of:)),
                 running: Profile.Invocation.named(calls.running, hidden: naming.hidden, name: naming.name(of:)))
            }
            return (profile, invocations, ProfilerModules.paths(in: symbolizer.moduleMap), symbolizer.tableBytes)
        }
        profile.overhead.symbolizationNanoseconds = ss_now_ns() - symbolizationStart
        profile.overhead.symbolTableBytes = tableBytes
        profile.overhead.handlerMedianNanoseconds = span.handlerTiming.percentile(0.5)
        profile.overhead.handlerP99Nanoseconds = span.handlerTiming.percentile(0.99)
        profile.overhead.handlerTotalNanoseconds = span.handlerTiming.totalNanoseconds
        profile.overhead.samplerCPUNanoseconds = span.samplerCPUNanoseconds
        profile.asyncStacks = span.asyncStacks
        profile.profilerModules = profilerModules
        profile.engine = String(cString: ss_engine_description())
        profile.kernelTimeSampled = ss_engine_counts_kernel_time() != 0
        profile.realtimeStartNanoseconds = realtimeNanoseconds(atMonotonic: span.startNanoseconds)
        profile.command = commandLine()
        profile.invocations = invocations?.closed ?? []
        profile.runningInvocations = invocations?.running ?? []
        profile.invocationCounts = span.calls?.counts ?? Profile.InvocationCounts()
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
        let raw = FileIO.readText("/proc/thread-self/cmdline") ?? "" // /proc/self's is empty once the main thread has ended
        return raw.split(separator: "\0").joined(separator: " ")
    }
}
