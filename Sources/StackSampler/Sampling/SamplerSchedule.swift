import CEngineHeader

/// What the sampler thread does at each wake besides draining the engine's buffer, and how
/// often it wakes: one type per sampling mode (`CPUDrainSchedule`, `WallScheduler`).
protocol SamplerSchedule {
    /// Time between two ticks, in ns.
    var intervalNanoseconds: UInt64 { get }
    /// Ticks the next wake should come after (it may come later: `wake`'s `late`).
    var ticksPerWake: Int { get }
    /// Wake-ups that came late: ticks counted with the stacks found when the sampler woke.
    var missedTicks: Int { get }
    /// Ticks of a thread whose stack could not be known without risk (`Profile.Losses.skippedTicks`).
    var skippedTicks: Int { get }
    /// A sample drained from the engine's buffer: returns the ticks it also stands for.
    mutating func arrived(_ sample: Sample) -> Int
    /// Hands a sample drained from the engine's buffer to `routing` (by default taken at once,
    /// with the ticks `arrived` says it stands for).
    mutating func route(_ sample: Sample, into routing: inout SampleRouting)
    /// The work of a wake at `now`, `due` ticks after the last one (`late` of them more than
    /// `ticksPerWake` asked for: the sampler thread was kept off a core): `threads` are attached.
    mutating func wake(at now: UInt64, due: Int, late: Int, threads: ArraySlice<Int32>, routing: inout SampleRouting)
    /// Forgets a thread that has exited.
    mutating func threadEnded(_ tid: Int32)
    /// A thread has exited, before `routing` forgets it: what it still owes is counted.
    mutating func threadEnding(_ tid: Int32, routing: inout SampleRouting)
    /// The counts are about to be read (a window, a span, a snapshot): ticks kept to be counted
    /// later are counted now.
    mutating func settle(routing: inout SampleRouting)
    /// The session ends, every sample drained and every tick up to the stop counted: what the
    /// threads still owe is counted.
    mutating func finishing(routing: inout SampleRouting)
    /// The session is being stopped by thread `tid`, which has run the profiler's code since
    /// `time`: its samples taken since then, drained, are not the program's.
    mutating func stopping(_ tid: Int32, from time: UInt64)
    /// The session starts: `threads`, attached before it, are watched from now (their ticks
    /// before a thread is watched cannot be known); later, the threads attached meanwhile, when
    /// `watchesNewThreads` woke the sampler for one.
    mutating func watch(_ threads: ArraySlice<Int32>)
    /// Threads that detached themselves as they ended since the last wake, with their CPU time
    /// then: told before the wake that counts the ticks up to their end.
    mutating func threadsEnded(_ notes: [ss_ended_thread])
    /// Whether a thread started during a sleep that counts more than one tick should wake the
    /// sampler thread, to be watched at once (`watch`).
    var watchesNewThreads: Bool { get }
}

extension SamplerSchedule {
    var ticksPerWake: Int { 1 }
    var watchesNewThreads: Bool { false }
    mutating func threadsEnded(_ notes: [ss_ended_thread]) {}
    mutating func threadEnding(_ tid: Int32, routing: inout SampleRouting) {}
    mutating func finishing(routing: inout SampleRouting) {}
    mutating func watch(_ threads: ArraySlice<Int32>) {}
    mutating func stopping(_ tid: Int32, from time: UInt64) {}
    mutating func settle(routing: inout SampleRouting) {}

    mutating func route(_ sample: Sample, into routing: inout SampleRouting) {
        routing.take(sample, owedTicks: arrived(sample))
    }
}
