import Testing
@testable import StackSampler

/// Continuous mode's side of invocation tracking: a window takes the calls that ended in it and
/// lists the open ones as running; a call that spans the cut is reported once, whole, later.
@Suite struct WindowCallsTests {
    typealias Tracker = InvocationTracker<InvocationTrackerTests.BlockLookup>

    @Test("a call open at a window's end is listed running there and reported once, whole, in the window where it ends")
    func spanningCallIsCarriedOver() throws {
        var tracker = InvocationTrackerTests.tracker()
        // main calls a for 3 samples, then b: the cut falls after the second sample of a.
        InvocationTrackerTests.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2050]], thread: 0)
        let first = tracker.takeWindow()
        #expect(first.closed.isEmpty, "\(first.closed)")
        #expect(first.running.compactMap { InvocationTrackerTests.BlockLookup.names[$0.address & ~0xFF] }.sorted() == ["a", "main"])
        #expect(first.running.first { $0.address & ~0xFF == 0x2000 }?.durationNanoseconds == 2 * InvocationTrackerTests.period)
        // The sampler renumbers its threads at the cut: thread 0 is now thread 3.
        tracker.renumber([0: 3])
        InvocationTrackerTests.feed(&tracker, [[0x1010, 0x2090], [0x1020, 0x3010]], thread: 3, from: 3)
        let second = tracker.takeWindow()
        let a = try #require(second.closed.only, "\(second.closed)")
        #expect(a.address & ~0xFF == 0x2000 && a.thread == 3 && a.samples == 3)
        #expect(a.durationNanoseconds == 3 * InvocationTrackerTests.period, "a lasted its 3 samples, across the cut")
        #expect(second.counts.kept == 1)
        tracker.threadEnded(thread: 3)
        let third = tracker.takeWindow()
        #expect(third.closed.count == 2 && third.running.isEmpty, "b and main end with the thread: \(third.closed)")
        #expect(tracker.takeWindow().closed.isEmpty, "nothing is reported twice")
    }

    @Test("the cap holds per window: the calls past it are counted as dropped, and the next window starts afresh")
    func capPerWindow() {
        var tracker = InvocationTrackerTests.tracker(InvocationConfiguration(capacity: 1, minimumSamples: 1))
        InvocationTrackerTests.feed(&tracker, [[0x1010, 0x2005], [0x1020, 0x3010], [0x1030, 0x2005], [0x1040, 0x3005]])
        let first = tracker.takeWindow()
        #expect(first.closed.count == 1 && first.counts.dropped == 2, "\(first.counts)")
        InvocationTrackerTests.feed(&tracker, [[0x1050, 0x2005]], from: 5)
        #expect(tracker.takeWindow().closed.count == 1)
    }

    @Test("durations in log buckets: each bucket's bound is at most 25 % above the last, and a percentile is its bucket's lower bound")
    func histogramBuckets() {
        var histogram = DurationHistogram()
        for milliseconds in 1...100 { histogram.add(UInt64(milliseconds) * 1_000_000) }
        #expect(histogram.count == 100)
        let p50 = histogram.percentile(0.5)
        #expect(p50 <= 50_000_000 && p50 * 5 >= 50_000_000 * 4, "p50 \(p50)")
        for index in 8..<200 {
            let lower = DurationHistogram.lowerBound(ofBucket: index), next = DurationHistogram.lowerBound(ofBucket: index + 1)
            #expect(DurationHistogram.bucket(of: lower) == index && next > lower && next - lower <= lower / 4)
        }
        var merged = histogram
        merged.merge(histogram)
        #expect(merged.count == 200 && merged.percentile(0.5) == p50)
    }
}
