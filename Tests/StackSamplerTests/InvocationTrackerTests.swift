import Testing
@testable import StackSampler

/// The stack diff on synthetic samples. Functions occupy 0x100-byte blocks (0x1000 is `main`,
/// 0x2000 `a`, 0x3000 `b`, 0x4000 `recurse`): a frame's function starts at its address rounded
/// down to the block, so a return address 0x2040 is a call site inside `a`.
@Suite struct InvocationTrackerTests {
    /// Function starts and names from the address blocks.
    struct BlockLookup: FunctionLookup {
        static let names: [UInt: String] = [0x1000: "main", 0x2000: "a", 0x3000: "b", 0x4000: "recurse"]
        mutating func functionStart(of address: UInt) -> UInt { address & ~0xFF }
        mutating func name(of address: UInt) -> String { Self.names[address & ~0xFF] ?? "unknown" }
    }

    static let period: UInt64 = 1_000

    /// A tracker with `settings`, sampling every `period` ns.
    static func tracker(_ settings: InvocationConfiguration = InvocationConfiguration(minimumSamples: 1)) -> InvocationTracker<BlockLookup> {
        InvocationTracker(settings: settings, period: period, lookup: BlockLookup())
    }

    /// Feeds root-first `stacks`, one sample per period from t = period.
    static func feed(_ tracker: inout InvocationTracker<BlockLookup>, _ stacks: [[UInt]], thread: Int = 0, from first: UInt64 = 1) {
        for (offset, stack) in stacks.enumerated() {
            tracker.record(thread: thread, leafFirst: Array(stack.reversed()), isComplete: true, at: (first + UInt64(offset)) * period)
        }
    }

    /// The kept records of function `name`, in the order they started.
    static func records(_ tracker: InvocationTracker<BlockLookup>, _ name: String) -> [ClosedInvocation] {
        tracker.records.filter { BlockLookup.names[$0.address & ~0xFF] == name }.sorted { $0.startNanoseconds < $1.startNanoseconds }
    }

    @Test("calls under one caller start half a period before their first sample and last their periods seen, with parent, trace and depth")
    func callsUnderOneCallerWithTimesFromTheirSamples() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2050], [0x1010, 0x2090], [0x1020, 0x3010], [0x1020, 0x3020]])
        tracker.threadEnded(thread: 0)
        let main = try #require(Self.records(tracker, "main").only)
        let a = try #require(Self.records(tracker, "a").only)
        let b = try #require(Self.records(tracker, "b").only)
        #expect((main.samples, a.samples, b.samples) == (5, 3, 2))
        // First seen at 1, 1 and 4 periods; last seen at 5, 3 and 5.
        #expect(main.startNanoseconds == Self.period / 2 && main.durationNanoseconds == 5 * Self.period)
        #expect(a.startNanoseconds == Self.period / 2 && a.durationNanoseconds == 3 * Self.period)
        #expect(b.startNanoseconds == 4 * Self.period - Self.period / 2 && b.durationNanoseconds == 2 * Self.period)
        #expect(main.parentID == 0 && a.parentID == main.id && b.parentID == main.id)
        #expect([main, a, b].allSatisfy { $0.traceID == main.id })
        #expect((main.depth, a.depth, b.depth) == (0, 1, 1))
    }

    @Test("a sample older than the thread's last one opens its calls no earlier than their open caller")
    func olderSampleStartsNoEarlierThanItsCaller() throws {
        var tracker = Self.tracker()
        tracker.record(thread: 0, leafFirst: [0x1010], isComplete: true, at: 10 * Self.period)
        tracker.record(thread: 0, leafFirst: [0x2010, 0x1010], isComplete: true, at: 5 * Self.period)
        tracker.record(thread: 0, leafFirst: [0x2010, 0x1010], isComplete: true, at: 12 * Self.period)
        tracker.threadEnded(thread: 0)
        let main = try #require(Self.records(tracker, "main").only)
        let a = try #require(Self.records(tracker, "a").only)
        #expect(a.startNanoseconds >= main.startNanoseconds, "a starts at \(a.startNanoseconds), main at \(main.startNanoseconds)")
        #expect(a.startNanoseconds + a.durationNanoseconds <= main.startNanoseconds + main.durationNanoseconds)
    }

    /// A caller's frame moves between its call sites within one invocation; its callees change.
    @Test("a caller whose frame moves between its call sites stays one call; its callee called from two call sites is two calls")
    func callerFrameMovingBetweenCallSitesIsOneInvocation() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2020, 0x3010], [0x1010, 0x2040, 0x3010], [0x1010, 0x2060]])
        tracker.finish()
        #expect(Self.records(tracker, "a").map(\.samples) == [4])
        // `b` from call site 0x2020, then from 0x2040: two calls.
        #expect(Self.records(tracker, "b").count == 2)
    }

    @Test("the same function called from another call site of its caller is a new call; the caller stays one")
    func sameFunctionFromAnotherCallSiteIsANewInvocation() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2005], [0x1030, 0x2005], [0x1030, 0x2005]])
        tracker.finish()
        #expect(Self.records(tracker, "a").map(\.samples) == [2, 2])
        #expect(Self.records(tracker, "main").map(\.samples) == [4])
    }

    @Test("a recursion ten deep gives ten calls at depths 1 to 10, each the parent of the next")
    func recursionOfDepthTenGivesTenNestedInvocations() throws {
        var tracker = Self.tracker()
        let stack: [UInt] = [0x1010] + Array(repeating: 0x4010, count: 9) + [0x4080]
        Self.feed(&tracker, [stack, stack, stack, [0x1010]])
        tracker.finish()
        let calls = Self.records(tracker, "recurse").sorted { $0.depth < $1.depth }
        #expect(calls.count == 10)
        #expect(calls.map(\.depth) == Array(1...10))
        #expect(calls.allSatisfy { $0.samples == 3 })
        let main = try #require(Self.records(tracker, "main").only)
        #expect(calls[0].parentID == main.id)
        for (caller, callee) in zip(calls, calls.dropFirst()) { #expect(callee.parentID == caller.id) }
    }

    @Test("two calls with samples of the caller alone between them are two calls, five periods apart")
    func twoCallsWithSamplesOfTheCallerBetweenAreTwo() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2005], [0x1008], [0x1009], [0x100A], [0x1010, 0x2005], [0x1010, 0x2005]])
        tracker.finish()
        let calls = Self.records(tracker, "a")
        #expect(calls.map(\.samples) == [2, 2])
        #expect(calls[1].startNanoseconds - calls[0].startNanoseconds == 5 * Self.period)
    }

    /// Wall mode: what was open before lost ticks is not said to go on after them.
    @Test("lost ticks end the thread's open calls at their last sample, cut, and the next sample's calls start cut; another thread's calls go on whole")
    func lostTicksCutTheThreadsCalls() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2005]], thread: 0)
        Self.feed(&tracker, [[0x1010, 0x3005], [0x1010, 0x3005]], thread: 1)
        tracker.ticksLost(thread: 0)
        // Four ticks lost in a row, more than is bridged: told at the next sample.
        #expect(tracker.records.isEmpty)
        Self.feed(&tracker, [[0x1010, 0x2005]], thread: 0, from: 7)
        #expect(tracker.records.count == 2 && tracker.records.allSatisfy { $0.thread == 0 && $0.isCut && $0.durationNanoseconds == 2 * Self.period })
        // The same stack after the lost ticks: new calls, not the old ones going on.
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x3005]], thread: 0, from: 8)
        Self.feed(&tracker, [[0x1010, 0x3005]], thread: 1, from: 7)
        // A second loss before the thread's next sample changes nothing more.
        tracker.ticksLost(thread: 0)
        tracker.ticksLost(thread: 0)
        Self.feed(&tracker, [[0x1010, 0x2005]], thread: 0, from: 20)
        tracker.finish()
        let a = Self.records(tracker, "a").filter { $0.thread == 0 }
        #expect(a.map(\.samples) == [2, 2, 1] && a.allSatisfy(\.isCut), "\(a)")
        #expect(a[1].startNanoseconds == 7 * Self.period - Self.period / 2)
        // Opened after a whole sample, not after lost ticks, but ended by them: cut too.
        let b0 = try #require(Self.records(tracker, "b").filter { $0.thread == 0 }.only)
        #expect(b0.isCut && b0.samples == 1)
        let b1 = try #require(Self.records(tracker, "b").filter { $0.thread == 1 }.only)
        #expect(!b1.isCut && b1.samples == 3)
        #expect(tracker.counts.cut == tracker.records.filter(\.isCut).count && tracker.counts.cut == 7)
    }

    /// Wall mode: one lost tick between two samples is bridged; two in a row are not (a 25 ms wait
    /// between two requests at 10 ms has two or three ticks: both lost, the requests must not merge).
    @Test("one tick lost between two samples is bridged: the calls go on whole; two in a row cut them; lost ticks before a thread's end cut its calls")
    func singleLossesAreBridged() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2005]], thread: 0)
        tracker.ticksLost(thread: 0)
        Self.feed(&tracker, [[0x1010, 0x2005]], thread: 0, from: 4)
        tracker.ticksLost(thread: 0)
        tracker.repeatLast(thread: 0, at: 6 * Self.period, times: 2)
        #expect(tracker.records.isEmpty && tracker.counts.bridgedGaps == 2)
        // Two ticks lost in a row: the call is cut there, though the same stack comes after.
        tracker.ticksLost(thread: 0)
        Self.feed(&tracker, [[0x1010, 0x2005]], thread: 0, from: 9)
        let first = try #require(Self.records(tracker, "a").only)
        #expect(first.samples == 5 && first.durationNanoseconds == 6 * Self.period && first.isCut)
        tracker.ticksLost(thread: 0)
        tracker.threadEnded(thread: 0)
        let a = Self.records(tracker, "a")
        #expect(a.map(\.samples) == [5, 1] && a.allSatisfy(\.isCut))
        #expect(tracker.counts.cut == 4 && tracker.counts.bridgedGaps == 2)
    }

    /// Thread end closes a thread's invocations at their last sample; other threads carry on.
    @Test("a thread's end closes its calls at their last sample; another thread's call goes on")
    func threadExitClosesOnlyThatThread() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x2005]], thread: 0)
        Self.feed(&tracker, [[0x1010, 0x3005], [0x1010, 0x3005]], thread: 1)
        tracker.threadEnded(thread: 0)
        #expect(tracker.records.count == 2 && tracker.records.allSatisfy { $0.thread == 0 })
        #expect(tracker.records.allSatisfy { $0.durationNanoseconds == 2 * Self.period })
        Self.feed(&tracker, [[0x1010, 0x3005]], thread: 1, from: 10)
        tracker.finish()
        let b = try #require(Self.records(tracker, "b").only)
        #expect(b.thread == 1 && b.samples == 3 && b.durationNanoseconds == 10 * Self.period)
    }

    /// A truncated or leaf-only stack cannot be aligned: it is counted and changes nothing.
    @Test("truncated and leaf-only stacks are counted as incomplete and change no call")
    func incompleteStacksAreSkipped() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005]])
        tracker.record(thread: 0, leafFirst: [0x3005, 0x2040], isComplete: false, at: 2 * Self.period)
        tracker.record(thread: 0, leafFirst: [0x3005], isComplete: false, at: 3 * Self.period)
        Self.feed(&tracker, [[0x1010, 0x2005]], from: 4)
        tracker.finish()
        #expect(tracker.counts.incompleteSamples == 2)
        #expect(Self.records(tracker, "b").isEmpty)
        let a = try #require(Self.records(tracker, "a").only)
        #expect(a.samples == 2 && a.durationNanoseconds == 4 * Self.period)
    }

    /// Wall mode counts a thread that did not run as another sample of its last stack.
    @Test("a repeated sample extends every call of the thread's open stack; a thread without one is ignored")
    func repeatedSampleExtendsTheOpenStack() throws {
        var tracker = Self.tracker()
        Self.feed(&tracker, [[0x1010, 0x2005]])
        tracker.repeatLast(thread: 0, at: 2 * Self.period)
        tracker.repeatLast(thread: 0, at: 3 * Self.period)
        tracker.repeatLast(thread: 7, at: 3 * Self.period)
        tracker.finish()
        #expect(tracker.records.count == 2)
        #expect(tracker.records.allSatisfy { $0.samples == 3 && $0.durationNanoseconds == 3 * Self.period })
    }

    /// Ticks of a sleeping thread counted in one step extend the open stack as many single ones do.
    @Test("ticks of a sleeping thread counted in one step extend its calls as many single repeats do")
    func repeatsCountedInOneStepEqualSingleOnes() throws {
        var single = Self.tracker()
        var batched = Self.tracker()
        Self.feed(&single, [[0x1010, 0x2005]])
        Self.feed(&batched, [[0x1010, 0x2005]])
        for tick in 2...5 { single.repeatLast(thread: 0, at: UInt64(tick) * Self.period) }
        batched.repeatLast(thread: 0, at: 5 * Self.period, times: 4)
        single.finish()
        batched.finish()
        #expect(batched.records.map(\.samples) == [5, 5])
        #expect(batched.records.map(\.samples) == single.records.map(\.samples))
        #expect(batched.records.map(\.durationNanoseconds) == single.records.map(\.durationNanoseconds))
    }

    @Test("calls with fewer samples or a shorter duration than the minimums are counted as filtered, not kept")
    func minimumSamplesAndDurationFilter() throws {
        var tracker = Self.tracker(InvocationConfiguration(minimumSamples: 2, minimumDuration: .nanoseconds(3 * Self.period)))
        Self.feed(&tracker, [[0x1010, 0x2005], [0x1010, 0x3005], [0x1010, 0x3005], [0x1010, 0x2005], [0x1010, 0x2005], [0x1010, 0x2005]])
        tracker.finish()
        #expect(Self.records(tracker, "a").map(\.samples) == [3])
        #expect(Self.records(tracker, "b").isEmpty)  // two samples, 2 periods: too short
        #expect(tracker.counts.filtered == 2 && tracker.counts.kept == 2)
    }

    /// With a name pattern, a kept call's parent is its nearest kept caller.
    @Test("a name pattern keeps the matching calls, each with its nearest kept caller as parent and the filtered root's trace")
    func patternKeepsMatchesAndRelinksParents() throws {
        var tracker = Self.tracker(InvocationConfiguration(minimumSamples: 1, functionPattern: FunctionPattern("?")))
        Self.feed(&tracker, [[0x1010, 0x2010, 0x4010, 0x3005], [0x1010, 0x2010, 0x4010, 0x3005]])
        tracker.finish()
        #expect(tracker.records.count == 2)
        let a = try #require(Self.records(tracker, "a").only)
        let b = try #require(Self.records(tracker, "b").only)
        #expect(a.parentID == 0 && b.parentID == a.id)
        // The trace is the root `main`'s, although it is filtered out.
        #expect(a.traceID == b.traceID && a.traceID != a.id && a.traceID != b.id)
    }

    @Test("a maximum depth of 2 keeps the calls at depths 0 and 1 only")
    func depthLimit() throws {
        var tracker = Self.tracker(InvocationConfiguration(minimumSamples: 1, maxDepth: 2))
        Self.feed(&tracker, [[0x1010, 0x2010, 0x3005]])
        tracker.finish()
        #expect(tracker.records.map(\.depth).sorted() == [0, 1])
    }

    /// Records beyond the cap are counted as dropped, not kept.
    @Test("beyond the cap, calls are counted as dropped, not kept")
    func capacityBoundsTheRecords() throws {
        var tracker = Self.tracker(InvocationConfiguration(capacity: 3, minimumSamples: 1))
        Self.feed(&tracker, (0..<10).map { [0x1010, $0 % 2 == 0 ? 0x2005 : 0x3005] })
        tracker.finish()
        #expect(tracker.records.count == 3)
        #expect(tracker.counts.kept == 3 && tracker.counts.dropped == 8)
    }

    /// One report per stall, while it runs, for the outermost invocation past the threshold;
    /// a new call that runs long under it is a new stall.
    @Test("a stall is reported once, while it runs, for the outermost call past the threshold; a long callee after it is a new stall")
    func stallIsReportedOnceWhileRunning() throws {
        var tracker = Self.tracker(InvocationConfiguration(minimumSamples: 1, stallThreshold: .nanoseconds(4 * Self.period)))
        Self.feed(&tracker, Array(repeating: [0x1010, 0x2005], count: 3))
        #expect(tracker.takeStalls().isEmpty)
        Self.feed(&tracker, [[0x1010, 0x2005]], from: 4)  // 4 periods: not past
        #expect(tracker.takeStalls().isEmpty)
        Self.feed(&tracker, [[0x1010, 0x2005]], from: 5)
        let first = try #require(tracker.takeStalls().only)
        #expect(first.depth == 0 && first.frames.map(\.address) == [0x1010, 0x2005])
        #expect(first.frames.map(\.runningNanoseconds) == [5 * Self.period, 5 * Self.period])
        #expect(first.culprit.address == 0x2005)
        for time in 6...9 { tracker.repeatLast(thread: 0, at: UInt64(time) * Self.period) }
        Self.feed(&tracker, Array(repeating: [0x1010, 0x3005], count: 4), from: 10)  // `b`, 4 periods
        #expect(tracker.takeStalls().isEmpty)
        Self.feed(&tracker, [[0x1010, 0x3005]], from: 14)
        let second = try #require(tracker.takeStalls().only)
        #expect(second.depth == 1 && second.culprit.address == 0x3005 && second.frames[1].runningNanoseconds == 5 * Self.period)
        #expect(tracker.counts.stalls == 2)
    }
}

extension Array {
    /// The single element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
