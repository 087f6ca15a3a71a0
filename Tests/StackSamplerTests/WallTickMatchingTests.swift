import Testing
@testable import StackSampler

/// What the matching counted, tick by tick: each counted tick's stack, and the threads told of
/// ticks lost where they may have been anywhere.
private struct CountedTicks: WallTickCounts {
    private(set) var stacks: [[UInt]] = []
    private(set) var placeLostFor: [Int32] = []
    private var last: [Int32: [UInt]] = [:]

    mutating func take(_ sample: Sample, owedTicks: Int) {
        last[sample.tid] = sample.frames
        stacks += Array(repeating: sample.frames, count: 1 + owedTicks)
    }

    mutating func repeatLast(_ tid: Int32, at now: UInt64, times: Int, spacing: UInt64) {
        guard let frames = last[tid] else { return }
        stacks += Array(repeating: frames, count: times)
    }

    mutating func ticksLost(_ tid: Int32) { placeLostFor.append(tid) }
}

/// Wall mode's matching of ticks to stacks, fed the CPU times and stacks the kernel's records
/// would give, without a kernel.
@Suite struct WallTickMatchingTests {
    private static let millisecond: Int64 = 1_000_000
    private static let tid: Int32 = 7
    private static let sleepFrames: [UInt] = [0x10, 0x11]
    private static let renderFrames: [UInt] = [0x20, 0x21]
    private static let otherFrames: [UInt] = [0x30, 0x31]

    /// Matching at 1 ms ticks with samples a period of CPU time apart (the counters' spacing).
    private func matching() -> WallTickMatching {
        WallTickMatching(intervalNanoseconds: UInt64(Self.millisecond), sampleSpacing: Self.millisecond)
    }

    /// A sample of the running thread at CPU time `cpu`, standing for a period around it.
    private func running(_ frames: [UInt], cpu: Int64) -> WallThread.Known {
        WallThread.Known(sample: engineSample(tid: Self.tid, frames: frames, at: UInt64(cpu), cpu: cpu), cpu: cpu, reach: Self.millisecond)
    }

    /// A stack walked in the sleep that began at `since`, the thread's CPU time `cpu` then.
    private func walked(sleep since: UInt64, cpu: Int64) -> WallThread.Known {
        var known = WallThread.Known(sample: engineSample(tid: Self.tid, frames: Self.sleepFrames, at: since, cpu: cpu), cpu: cpu,
                                     reach: WallTickMatching.unmovedNanoseconds)
        known.sleep = since
        return known
    }

    @Test("a tick on a core after a walked sleep waits for a sample, though its estimated CPU time falls before the walk's")
    func walkedSleepDoesNotTakeTheTicksAfterIt() {
        // The thread's CPU time at a tick is estimated as its CPU time at the read less its time
        // on a core since; where the host steals time, that runs ahead of CPU time, and a tick
        // 1 ms into the rendering after a wait seems to come 20 µs before the wait's walk.
        var matching = matching()
        var counts = CountedTicks()
        let thread = WallThread(tid: Self.tid)
        matching.settle(thread, next: walked(sleep: 5_000_000, cpu: 40 * Self.millisecond), routing: &counts)
        matching.count(thread, known: thread.known!, at: 6_000_000, ticks: 3, routing: &counts)
        for tick in 0..<4 {
            matching.tick(thread, cpu: 40 * Self.millisecond - 20_000 + Int64(tick) * Self.millisecond / 4, at: UInt64(20_000_000 + tick * 1_000_000),
                          ticks: 1, routing: &counts)
        }
        #expect(counts.stacks.count == 3)
        #expect(thread.pending.count == 4)
        thread.samples.append(running(Self.renderFrames, cpu: 40 * Self.millisecond + 400_000))
        matching.takeSamples(of: thread, upTo: .max, routing: &counts)
        matching.ending(thread, routing: &counts)
        #expect(counts.stacks == Array(repeating: Self.sleepFrames, count: 3) + Array(repeating: Self.renderFrames, count: 4))
        #expect(matching.lost.isEmpty)
    }

    @Test("a tick on a core is counted with the sample nearer to it in CPU time, at once when no later one can be nearer")
    func tickTakesTheNearerSample() {
        var matching = matching()
        var counts = CountedTicks()
        let thread = WallThread(tid: Self.tid)
        matching.settle(thread, next: running(Self.otherFrames, cpu: 10 * Self.millisecond), routing: &counts)
        // 0.7 ms after the first sample: the next one, a period on, is nearer.
        matching.tick(thread, cpu: 10 * Self.millisecond + 700_000, at: 1, ticks: 1, routing: &counts)
        // 0.2 ms before it: still nearer to it than to the first.
        matching.tick(thread, cpu: 10 * Self.millisecond + 800_000, at: 2, ticks: 1, routing: &counts)
        #expect(counts.stacks.isEmpty)
        matching.settle(thread, next: running(Self.renderFrames, cpu: 11 * Self.millisecond), routing: &counts)
        // 0.2 ms after the second sample: no later sample can be nearer.
        matching.tick(thread, cpu: 11 * Self.millisecond + 200_000, at: 3, ticks: 1, routing: &counts)
        #expect(counts.stacks == Array(repeating: Self.renderFrames, count: 3))
        #expect(thread.pending.isEmpty)
    }

    @Test("a tick no sample reaches is counted lost for it, and the thread's calls go on (its place was known)")
    func tickWithoutSampleNearIsLost() {
        var matching = matching()
        var counts = CountedTicks()
        let thread = WallThread(tid: Self.tid)
        matching.settle(thread, next: running(Self.otherFrames, cpu: 0), routing: &counts)
        matching.tick(thread, cpu: 5 * Self.millisecond, at: 1, ticks: 2, routing: &counts)
        matching.tick(thread, cpu: 11 * Self.millisecond + 500_000, at: 2, ticks: 1, routing: &counts)
        matching.settle(thread, next: running(Self.renderFrames, cpu: 12 * Self.millisecond), routing: &counts)
        #expect(counts.stacks == [Self.renderFrames])
        #expect(matching.lost == [.noSampleNear: 2])
        #expect(counts.placeLostFor.isEmpty)
    }

    @Test("as the thread ends, its waiting ticks take its last sample where it reaches them, and a walked sleep's stack none")
    func endingCountsWhatTheLastStackReaches() {
        var matching = matching()
        var counts = CountedTicks()
        let thread = WallThread(tid: Self.tid)
        matching.settle(thread, next: running(Self.renderFrames, cpu: 0), routing: &counts)
        matching.tick(thread, cpu: 900_000, at: 1, ticks: 1, routing: &counts)
        matching.tick(thread, cpu: 3 * Self.millisecond, at: 2, ticks: 1, routing: &counts)
        matching.ending(thread, routing: &counts)
        #expect(counts.stacks == [Self.renderFrames])
        #expect(matching.lost == [.noSampleNear: 1])

        let sleeper = WallThread(tid: Self.tid + 1)
        matching.settle(sleeper, next: walked(sleep: 1_000, cpu: Self.millisecond), routing: &counts)
        matching.tick(sleeper, cpu: Self.millisecond, at: 3, ticks: 1, routing: &counts)
        matching.ending(sleeper, routing: &counts)
        #expect(matching.lost == [.noSampleNear: 2])
        #expect(sleeper.pending.isEmpty)
    }
}
