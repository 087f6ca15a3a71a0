extension Profile {
    /// The bit from which a process's index in a merged tree is added to its addresses: user
    /// addresses stay below 2^47, so each process keeps a range of its own, and its mappings move
    /// with its addresses (a pprof location stays inside its mapping, at the same offset).
    private static let processAddressShift: UInt = 48

    /// The profiles of a process tree (`stacksampler record --follow-children`), each named
    /// through its own process's mappings, as one profile: every thread keeps its process (the
    /// `[name pid=N]` root of `ExportOptions.processRoot`), every address its name, line and
    /// mapping. `root` is the process the tree started from; the session runs from the earliest
    /// start to the latest end; losses add up. Invocations are left out.
    package static func mergingProcesses(_ processes: [Profile], root: Int32, command: String) -> Profile? {
        guard let first = processes.min(by: { $0.startNanoseconds < $1.startNanoseconds }) else { return nil }
        let end = processes.map { $0.startNanoseconds &+ $0.durationNanoseconds }.max() ?? first.startNanoseconds
        var merged = Profile(configuration: first.configuration, startNanoseconds: first.startNanoseconds,
                             durationNanoseconds: end &- first.startNanoseconds, signal: first.signal,
                             signalSubstituted: first.signalSubstituted, stacks: [], threads: [], frames: [:], modules: [],
                             losses: Losses())
        for (index, process) in processes.enumerated() {
            let offset = UInt(index) << processAddressShift
            let threadOffset = merged.threads.count
            merged.threads += process.threads
            merged.stacks += process.stacks.map { stack in
                var stack = stack
                stack.thread += threadOffset
                stack.addresses = stack.addresses.map { $0 &+ offset }
                return stack
            }
            for (address, frame) in process.frames { merged.frames[address &+ offset] = frame }
            merged.modules += process.modules.map { module in
                var module = module
                module.start &+= offset
                module.end &+= offset
                return module
            }
            merged.losses.add(process.losses)
            merged.profilerModules.formUnion(process.profilerModules)
        }
        let rootProcess = processes.first { $0.processID == root } ?? first
        merged.processID = rootProcess.processID
        merged.processName = rootProcess.processName
        merged.realtimeStartNanoseconds = first.realtimeStartNanoseconds
        merged.command = command
        return merged
    }
}

extension Profile.Losses {
    /// Adds `other`'s counts to these.
    mutating func add(_ other: Profile.Losses) {
        droppedSamples += other.droppedSamples
        truncatedSamples += other.truncatedSamples
        leafOnlySamples += other.leafOnlySamples
        unwindFailures += other.unwindFailures
        unwindFaults += other.unwindFaults
        missedTicks += other.missedTicks
        skippedTicksByReason.merge(other.skippedTicksByReason, uniquingKeysWith: +)
        overrunPeriods += other.overrunPeriods
        foreignSignals += other.foreignSignals
        countedEvents += other.countedEvents
        descriptorRefusals += other.descriptorRefusals
        earlyOverflows += other.earlyOverflows
        unwalkedSignals += other.unwalkedSignals
        preemptionsAtCopy += other.preemptionsAtCopy
        preemptionsAtNearestSample += other.preemptionsAtNearestSample
        subsampledTicks += other.subsampledTicks
        subsampleLooksPerSecond = max(subsampleLooksPerSecond, other.subsampleLooksPerSecond)
        ringsGivenBackForSwitches += other.ringsGivenBackForSwitches
        framePointerSamples += other.framePointerSamples
    }
}
