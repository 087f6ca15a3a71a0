import CEngineHeader
import Testing
@testable import StackSampler

@Suite struct StackAggregatorTests {
    @Test("each loss counts the samples of the stacks its cut marks, a wall tick repeating such a stack included")
    func lossesCountTheSamplesOfTheirMarkedStacks() {
        var aggregator = StackAggregator()
        let cuts: [(tid: Int32, flags: UInt32, cut: Profile.StackCut?)] = [
            (1, 0, nil), (2, UInt32(SS_SAMPLE_TRUNCATED), .depth), (3, UInt32(SS_SAMPLE_UNWIND_FAILED), .noUnwindInfo),
            (4, UInt32(SS_SAMPLE_LEAF_ONLY), .leafOnly), (5, UInt32(SS_SAMPLE_UNWIND_FAULTED), .fault),
        ]
        for (tid, flags, cut) in cuts {
            let key = aggregator.record(engineSample(tid: tid, frames: [0x30, 0x20], flags: flags, at: 1_000))
            #expect(key.cut == cut)
            // The thread did not run since: its next ticks repeat the stack.
            aggregator.repeatLast(tid, at: 2_000, times: Int(tid))
        }
        // Each thread's stack was counted 1 + tid times.
        #expect(aggregator.truncatedSamples == 3)
        #expect(aggregator.unwindFailures == 4)
        #expect(aggregator.leafOnlySamples == 5)
        #expect(aggregator.unwindFaults == 6)
        let counted: Int = aggregator.counts.values.reduce(0, +)
        #expect(counted == 20)
    }

    @Test("samples that stand for several periods make shares as precise as fewer samples of one period: 100 of one period beside one of 96 are as precise as 4 of one period")
    func heavySamplesLowerTheEffectiveSamples() {
        var aggregator = StackAggregator()
        for time in 1...96 { aggregator.record(engineSample(tid: 1, frames: [0x30], flags: 0, at: UInt64(time))) }
        aggregator.record(engineSample(tid: 1, frames: [0x40], flags: 0, at: 200, periods: 96))
        aggregator.repeatLast(1, at: 300, times: 4)
        let record = aggregator.threads[0]
        #expect(record.samples == 196 && record.taken == 101 && record.takenWeightSquares == 96 + 96 * 96 + 4)
        let thread = Profile.Thread(id: 1, name: "t", samples: record.samples, cpuNanoseconds: 0, observedNanoseconds: 0,
                                    takenSamples: record.taken, takenWeightSquares: record.takenWeightSquares)
        // 196² / 9316: a share of these samples is about as noisy as one of 4 samples.
        #expect(abs(Profile.effectiveSamples(of: [thread]) - 196.0 * 196.0 / 9316.0) < 1e-9)
        var even = thread
        even.samples = 101
        even.takenWeightSquares = 101
        #expect(Profile.effectiveSamples(of: [thread, even]) == Double(297 * 297) / Double(9316 + 101))
        #expect(Profile.effectiveSamples(of: [even]) == 101)
    }
}
