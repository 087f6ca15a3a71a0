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

    @Test("a calls table counts cut calls apart: count, percentiles, maximum and slowest are the whole calls'; JSON and text say how many were cut")
    func cutCallsAreCountedApart() throws {
        var profile = InvocationTimelineTests.profile()
        func call(_ id: UInt64, milliseconds: UInt64, cut: Bool) -> Profile.Invocation {
            Profile.Invocation(id: id, parentID: nil, traceID: id, thread: 0, name: "handle", depth: 0, startNanoseconds: 1_000_000 + id * 1_000_000_000,
                               durationNanoseconds: milliseconds * 1_000_000, samples: 3, isCut: cut)
        }
        profile.invocations = [call(1, milliseconds: 10, cut: false), call(2, milliseconds: 30, cut: false), call(3, milliseconds: 500, cut: true),
                               call(4, milliseconds: 20, cut: false), call(5, milliseconds: 7, cut: true)]
        profile.invocationCounts = Profile.InvocationCounts()
        profile.invocationCounts.kept = 5
        profile.invocationCounts.cut = 2
        let table = CallTable(profile)
        let handle = try #require(table.functions.only)
        #expect((handle.count, handle.cut) == (3, 2))
        #expect((handle.p50Nanoseconds, handle.maxNanoseconds) == (20_000_000, 30_000_000))
        #expect(handle.slowest.map(\.durationNanoseconds) == [30_000_000, 20_000_000, 10_000_000])
        #expect(table.json.contains("\"calls_cut\":2") && table.json.contains("\"cut\":2"), "\(table.json)")
        #expect(table.text().contains("3 calls of 1 functions") && table.text().contains("2 more were cut by ticks the sampler lost"), "\(table.text())")
        // A function whose every call was cut: counted, with no figures.
        profile.invocations = [call(6, milliseconds: 40, cut: true)]
        let onlyCut = try #require(CallTable(profile).functions.only)
        #expect((onlyCut.count, onlyCut.cut, onlyCut.maxNanoseconds, onlyCut.slowest.count) == (0, 1, 0, 0))
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
