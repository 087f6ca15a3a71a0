import CEngineHeader

/// The engine's and the schedule's loss counters at one moment (cheap to read: no histogram).
struct LossCounters: Sendable {
    var dropped: UInt64
    var foreignSignals: UInt64
    var countedEvents: UInt64
    var descriptorRefusals: UInt64
    var earlyOverflows: UInt64
    var unwalkedSignals: UInt64
    var missedTicks: Int
    /// Wall mode's ticks counted lost so far, by reason.
    var skippedTicks: [TickLoss: Int]
    var preemptionsAtCopy: Int
    var preemptionsAtNearestSample: Int
    var subsampledTicks: Int
    var subsampleLooksPerSecond: Int
    var ringsGivenBackForSwitches: Int

    /// The losses of `counts` from `start` to these counters.
    func losses(of counts: StackAggregator, since start: LossCounters) -> Profile.Losses {
        Profile.Losses(droppedSamples: Int(dropped &- start.dropped), truncatedSamples: counts.truncatedSamples,
                       leafOnlySamples: counts.leafOnlySamples, unwindFailures: counts.unwindFailures,
                       unwindFaults: counts.unwindFaults, missedTicks: missedTicks - start.missedTicks,
                       skippedTicksByReason: Self.difference(skippedTicks, start.skippedTicks), overrunPeriods: counts.overrunPeriods,
                       foreignSignals: Int(foreignSignals &- start.foreignSignals),
                       countedEvents: Int(countedEvents &- start.countedEvents),
                       descriptorRefusals: Int(descriptorRefusals &- start.descriptorRefusals),
                       earlyOverflows: Int(earlyOverflows &- start.earlyOverflows),
                       unwalkedSignals: Int(unwalkedSignals &- start.unwalkedSignals),
                       preemptionsAtCopy: preemptionsAtCopy - start.preemptionsAtCopy,
                       preemptionsAtNearestSample: preemptionsAtNearestSample - start.preemptionsAtNearestSample,
                       subsampledTicks: subsampledTicks - start.subsampledTicks,
                       subsampleLooksPerSecond: subsampledTicks > start.subsampledTicks ? subsampleLooksPerSecond : 0,
                       ringsGivenBackForSwitches: ringsGivenBackForSwitches - start.ringsGivenBackForSwitches,
                       framePointerSamples: counts.framePointerSamples)
    }

    /// The ticks lost since `start`, by reason's description (reasons with none left out).
    private static func difference(_ now: [TickLoss: Int], _ start: [TickLoss: Int]) -> [String: Int] {
        var lost: [String: Int] = [:]
        for (reason, ticks) in now where ticks - start[reason, default: 0] > 0 { lost[reason.rawValue] = ticks - start[reason, default: 0] }
        return lost
    }
}

/// The engine's and the sampler's running counters at one moment: a span's losses and costs are
/// the difference between two of them.
struct SessionCounters: Sendable {
    var losses: LossCounters
    var handlerTiming: HandlerTiming
    var asyncStacks: Profile.AsyncStacks
    /// CPU time the sampler thread had used, in ns.
    var samplerCPU: UInt64
}

/// What a session counted over one span of time (the whole session, a continuous window, or a
/// profile request), before any address is named.
struct CountedSpan: Sendable {
    /// The samples, threads and walk losses of the span.
    var counts: StackAggregator
    /// Monotonic times the span began and ended, in ns.
    var startNanoseconds: UInt64
    var endNanoseconds: UInt64
    var losses: Profile.Losses
    /// Handler times of the span's samples.
    var handlerTiming: HandlerTiming
    var asyncStacks: Profile.AsyncStacks
    /// CPU the sampler thread used during the span, in ns.
    var samplerCPUNanoseconds: UInt64
    /// The span's calls, when invocations are tracked (thread indexes of `counts`).
    var calls: WindowCalls?

    /// The span from `start` to `end` of `counts`, its losses those the counters show since `start`.
    init(counts: StackAggregator, from start: SessionCounters, to end: SessionCounters, startNanoseconds: UInt64, endNanoseconds: UInt64) {
        self.counts = counts
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        losses = end.losses.losses(of: counts, since: start.losses)
        handlerTiming = end.handlerTiming.since(start.handlerTiming)
        asyncStacks = end.asyncStacks.since(start.asyncStacks)
        samplerCPUNanoseconds = end.samplerCPU &- start.samplerCPU
    }
}

/// The samples of a profile request taken from a running session: its own counts, begun as a
/// continuation of the session's, fed every sample until the request ends it.
final class SpanCollector: @unchecked Sendable {
    /// Touched only under the sampler's loop lock.
    var counts: StackAggregator
    let startNanoseconds: UInt64
    let startCounters: SessionCounters

    init(counts: StackAggregator, startNanoseconds: UInt64, startCounters: SessionCounters) {
        self.counts = counts
        self.startNanoseconds = startNanoseconds
        self.startCounters = startCounters
    }
}
