import Testing
@testable import StackSampler

/// The summary's reasons for skipped ticks.
@Suite struct SummaryReasonsTests {
    @Test("reasons are listed largest first, ties by name; none gives nothing")
    func reasonsInOrder() {
        #expect(Profile.reasons([:]) == "")
        let listed = Profile.reasons(["no sample near in CPU time": 29, "sleep over before it was walked": 295, "thread gone": 8, "place unknown": 8])
        #expect(listed == ": 295 sleep over before it was walked, 29 no sample near in CPU time, 8 place unknown, 8 thread gone")
    }

    @Test("a raw recording's total, without reasons, is kept under its own name and adds up")
    func totalWithoutReasons() {
        var losses = Profile.Losses()
        losses.skippedTicks = 12
        #expect(losses.skippedTicksByReason == [Profile.Losses.reasonNotRecorded: 12])
        #expect(losses.skippedTicks == 12)
        losses.skippedTicks = 0
        #expect(losses.skippedTicksByReason.isEmpty)
    }
}
