import CEngineHeader

/// What the sampler thread does at each wake besides draining the engine's buffer, and how
/// often it wakes: one type per sampling mode (`CPUDrainSchedule`, `WallScheduler`). A class:
/// the sampler thread reads its figures at every wake, and reading them through an existential
/// of a struct copied the whole schedule each time (its dictionaries and arrays retained and
/// released: 1 % of the wall sampler's CPU in that copy alone).
protocol SamplerSchedule: AnyObject {
    /// Time between two ticks, in ns.
    var intervalNanoseconds: UInt64 { get }
    /// Ticks the next wake should come after (it may come later: `wake`'s `late`).
    var ticksPerWake: Int { get }
    /// Ticks between two looks at the threads' sleeps (`lookAtSleeps`) while the ticks wait to be
    /// counted: no more than `ticksPerWake`.
    var ticksPerLook: Int { get }
    /// A wake between those that count ticks: what must be seen at the time of tick `tick`, and
    /// cannot be seen later, is seen now and kept for the wake that counts that tick.
    func lookAtSleeps(at tick: UInt64)
    /// Wake-ups that came late: ticks counted with the stacks found when the sampler woke.
    var missedTicks: Int { get }
    /// Ticks of a thread whose stack could not be known without risk, by reason
    /// (`Profile.Losses.skippedTicksByReason`).
    var lostTicks: [TickLoss: Int] { get }
    /// Waits for a core counted at the stack copied where the thread was preempted, and those
    /// counted at the nearest sample for want of a copy (`Profile.Losses.preemptionsAtCopy`).
    var preemptionCounts: (atCopy: Int, atNearestSample: Int) { get }
    /// Ticks of threads no wake looked at, counted with the stack their last look found
    /// (`LookSubsample`), and the looks a second such a subsample makes (0: none is made).
    var subsampledTicks: Int { get }
    var subsampleLooksPerSecond: Int { get }
    /// Context-switch rings given back because their threads switched too often
    /// (`Profile.Losses.ringsGivenBackForSwitches`).
    var ringsGivenBackForSwitches: Int { get }
    /// A sample drained from the engine's buffer: returns the ticks it also stands for.
    func arrived(_ sample: Sample) -> Int
    /// Hands a sample drained from the engine's buffer to `routing` (by default taken at once,
    /// with the ticks `arrived` says it stands for).
    func route(_ sample: Sample, into routing: inout SampleRouting)
    /// The work of a wake at `now`, `due` ticks after the last one (`late` of them more than
    /// `ticksPerWake` asked for: the sampler thread was kept off a core): `threads` are attached.
    func wake(at now: UInt64, due: Int, late: Int, threads: ArraySlice<Int32>, routing: inout SampleRouting)
    /// Forgets a thread that has exited.
    func threadEnded(_ tid: Int32)
    /// A thread has exited, before `routing` forgets it: what it still owes is counted.
    func threadEnding(_ tid: Int32, routing: inout SampleRouting)
    /// The counts are about to be read (a window, a span, a snapshot): ticks kept to be counted
    /// later are counted now.
    func settle(routing: inout SampleRouting)
    /// The session ends, every sample drained and every tick up to the stop counted: what the
    /// threads still owe is counted.
    func finishing(routing: inout SampleRouting)
    /// The session is being stopped by thread `tid`, which may have run the profiler's code since
    /// `time`: its samples taken since then, drained and kept, are not the program's (those still
    /// in the buffer are dropped as they are drained).
    func stopping(_ tid: Int32, from time: UInt64)
    /// The session starts: `threads`, attached before it, are watched from now (their ticks
    /// before a thread is watched cannot be known); later, the threads attached meanwhile, when
    /// `watchesNewThreads` woke the sampler for one.
    func watch(_ threads: ArraySlice<Int32>)
    /// Threads that detached themselves as they ended since the last wake, with their CPU time
    /// then: told before the wake that counts the ticks up to their end.
    func threadsEnded(_ notes: [ss_ended_thread])
    /// Whether a thread started during a sleep that counts more than one tick should wake the
    /// sampler thread, to be watched at once (`watch`).
    var watchesNewThreads: Bool { get }
}

extension SamplerSchedule {
    var ticksPerWake: Int { 1 }
    var ticksPerLook: Int { ticksPerWake }
    func lookAtSleeps(at tick: UInt64) {}
    var watchesNewThreads: Bool { false }
    var subsampledTicks: Int { 0 }
    var subsampleLooksPerSecond: Int { 0 }
    var ringsGivenBackForSwitches: Int { 0 }
    func threadsEnded(_ notes: [ss_ended_thread]) {}
    func threadEnding(_ tid: Int32, routing: inout SampleRouting) {}
    func finishing(routing: inout SampleRouting) {}
    func watch(_ threads: ArraySlice<Int32>) {}
    func stopping(_ tid: Int32, from time: UInt64) {}
    func settle(routing: inout SampleRouting) {}

    func route(_ sample: Sample, into routing: inout SampleRouting) {
        routing.take(sample, owedTicks: arrived(sample))
    }
}
