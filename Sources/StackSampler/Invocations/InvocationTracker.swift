/// Reconstructs function invocations from each thread's successive stacks, as samples arrive.
///
/// Per thread it keeps the stack of open invocations, root first. The invocation at depth i is
/// one of the function F_i containing frame i, identified by its call site (frame i − 1, a
/// return address; 0 for the root) and the start of F_i. Frame i itself is not the identity:
/// in a caller it is a return address, which moves from call site to call site within one
/// invocation of F_i. A new stack is compared with the open one by that identity, root first:
/// the common prefix continues, the rest of the old stack is closed (at its last sample), the
/// rest of the new one is opened. Recursion is told apart by position.
///
/// Times: an invocation seen first at t₁ and last at t₂ starts at t₁ − P/2 and lasts
/// t₂ − t₁ + P. In wall mode that is k·P for k consecutive samples, and stays right when the
/// sampler misses a tick. In cpu mode samples come only while the thread runs, and no faster
/// than the kernel's tick (250 Hz here), so k·P would undercount; the span between the first
/// and last on-CPU samples is the call's wall-clock time, less what it spent off the CPU
/// before its first and after its last sample.
///
/// Wall mode has a sample at every tick, or a tick counted lost. Across ticks lost where the
/// thread may have been anywhere (`TickLoss.leavesPlaceUnknown`: asleep in a sleep not walked,
/// its switches unknown) its stack is not known, so nothing open before them is said to go on
/// after them: the open invocations end at their last sample, marked cut (their end is not
/// known), and those opened by the next sample are marked cut too (their start is not known). A
/// cut invocation lasted at least its duration; whether the calls on either side were one call
/// is not known. A gap of one lost tick (a look that raced a thread going to sleep) is bridged:
/// it leaves two periods between samples, so a call, or a gap between two calls, shorter than
/// two periods may go unseen there, where one period may between any two samples. A gap of two
/// or more is cut: three lost ticks bridged hid the 25 ms wait between two requests at 10 ms,
/// and the two were reported as one call of 240 ms.
struct InvocationTracker<Lookup: FunctionLookup> {
    /// An invocation still running: its identity and what has been seen of it.
    private struct Open {
        var callSite: UInt
        var function: UInt
        /// The frame's address in the latest sample, and in the first (which names it).
        var address: UInt
        var firstAddress: UInt
        var id: UInt64
        /// The nearest open caller that passes the depth and name filters; 0 for none.
        var parentID: UInt64
        var firstSeen: UInt64
        var lastSeen: UInt64
        var samples: Int
        /// Passes the depth and name filters (the sample count and duration are known at its end).
        var isWanted: Bool
        /// Part of a stall report already.
        var isReported: Bool
        /// Its start or end lay among lost ticks (opened by the first sample after them, or open when they came).
        var isCut: Bool
    }

    private var lookup: Lookup
    private let settings: InvocationConfiguration
    private let period: UInt64
    private let minimumDuration: UInt64
    private let stallThreshold: UInt64?
    /// Open invocations per thread index, root first.
    private var open: [Int: [Open]] = [:]
    /// Threads whose ticks were lost before their first sample, or across a gap cut: their next
    /// sample's new invocations have an unknown start.
    private var cutThreads: Set<Int> = []
    /// Threads whose ticks were lost since their last sample, with that sample's time: their
    /// next sample bridges the gap or cuts it.
    private var lostAfter: [Int: UInt64] = [:]
    /// The longest gap between two samples across lost ticks that is bridged: this many ticks
    /// lost in a row.
    static var bridgedLostTicks: UInt64 { 1 }
    /// Whether a function (by start) passes the name pattern.
    private var wantedFunctions: [UInt: Bool] = [:]
    private var nextID: UInt64 = 1
    /// Closed invocations kept, in the order they closed (children before their callers).
    private(set) var records: [ClosedInvocation] = []
    var counts = Profile.InvocationCounts()
    /// Stall reports not yet taken with `takeStalls()`.
    private var pendingStalls: [Stall] = []

    /// A tracker for samples taken every `period` ns.
    init(settings: InvocationConfiguration, period: UInt64, lookup: Lookup) {
        self.settings = settings
        self.period = period
        self.lookup = lookup
        minimumDuration = settings.minimumDuration.wholeNanoseconds
        stallThreshold = settings.stallThreshold?.wholeNanoseconds
    }

    /// Feeds one sample of thread `thread` (an index stable for the thread's life) taken at
    /// `time`, frames leaf first as the engine writes them. An incomplete stack (truncated at the
    /// maximum depth, or without callers) cannot be aligned with the previous one: it is counted
    /// and skipped, and the open invocations carry on unchanged.
    mutating func record<Frames: RandomAccessCollection<UInt>>(thread: Int, leafFirst frames: Frames, isComplete: Bool, at time: UInt64)
    where Frames.Index == Int {
        guard isComplete, !frames.isEmpty else {
            counts.incompleteSamples += 1
            return
        }
        var stack = open.removeValue(forKey: thread) ?? []
        cutIfLostTooLong(&stack, thread: thread, at: time)
        let opensCut = cutThreads.remove(thread) != nil
        // A thread's samples may come a little out of order (wall mode counts a tick that waited
        // for a sample when the sample comes): a call never starts before the calls open around it.
        let time = max(time, stack.first?.lastSeen ?? time)
        let count = frames.count
        let base = frames.startIndex
        /// Frame at `depth` from the root, and the start of its function (a caller's frame is a
        /// return address, which may lie past the function's end: look up the byte before it).
        func frame(_ depth: Int) -> UInt { frames[base + count - 1 - depth] }
        func function(_ depth: Int) -> UInt { lookup.functionStart(of: depth == count - 1 ? frame(depth) : frame(depth) &- 1) }

        var depth = 0
        while depth < min(count, stack.count), stack[depth].callSite == (depth == 0 ? 0 : frame(depth - 1)) {
            // The same address in the same role has the same function: no lookup.
            let unchanged = stack[depth].address == frame(depth) && (depth == count - 1) == (depth == stack.count - 1)
            guard unchanged || stack[depth].function == function(depth) else { break }
            stack[depth].address = frame(depth)
            stack[depth].lastSeen = max(stack[depth].lastSeen, time)
            stack[depth].samples += 1
            depth += 1
        }
        close(&stack, from: depth, thread: thread)
        for index in depth..<count {
            let start = function(index)
            let parentID = stack.last { $0.isWanted }?.id ?? 0
            let wanted = (settings.maxDepth.map { index < $0 } ?? true) && isWanted(start, address: frame(index))
            stack.append(Open(callSite: index == 0 ? 0 : frame(index - 1), function: start,
                              address: frame(index), firstAddress: frame(index), id: nextID, parentID: parentID,
                              firstSeen: time, lastSeen: time, samples: 1, isWanted: wanted, isReported: false, isCut: opensCut))
            nextID += 1
        }
        checkStall(&stack, thread: thread)
        open[thread] = stack
    }

    /// Counts the thread's last stack `times` more, the last at `time` (wall mode: the thread
    /// has not run since).
    mutating func repeatLast(thread: Int, at time: UInt64, times: Int = 1) {
        guard var stack = open.removeValue(forKey: thread) else { return }
        cutIfLostTooLong(&stack, thread: thread, at: time)
        guard !stack.isEmpty else { return }
        for index in stack.indices {
            stack[index].lastSeen = max(stack[index].lastSeen, time)
            stack[index].samples += times
        }
        checkStall(&stack, thread: thread)
        open[thread] = stack
    }

    /// The thread has exited: its open invocations end at their last sample.
    mutating func threadEnded(thread: Int) {
        defer { cutThreads.remove(thread) }
        guard var stack = open.removeValue(forKey: thread) else { return }
        cutIfLostTooLong(&stack, thread: thread, at: .max)
        close(&stack, from: 0, thread: thread)
    }

    /// Wall mode: ticks of the thread were lost after its last sample. Its next sample (or its
    /// end) says whether the gap is bridged or its open invocations end there, cut.
    mutating func ticksLost(thread: Int) {
        guard let last = open[thread]?.first?.lastSeen else {
            cutThreads.insert(thread)
            return
        }
        if lostAfter[thread] == nil { lostAfter[thread] = last }
    }

    /// Where ticks of the thread were lost since its last sample and the gap to `time` is longer
    /// than a bridged one, ends `stack` there, cut, and has the next sample's invocations opened cut.
    private mutating func cutIfLostTooLong(_ stack: inout [Open], thread: Int, at time: UInt64) {
        guard let last = lostAfter.removeValue(forKey: thread) else { return }
        guard time > last &+ (Self.bridgedLostTicks + 1) * period else {
            counts.bridgedGaps += 1
            return
        }
        for index in stack.indices { stack[index].isCut = true }
        close(&stack, from: 0, thread: thread)
        cutThreads.insert(thread)
    }

    /// The session ends: every open invocation ends at its last sample.
    mutating func finish() {
        for thread in open.keys.sorted() { threadEnded(thread: thread) }
    }

    /// The stall reports made since the last call.
    mutating func takeStalls() -> [Stall] {
        defer { pendingStalls.removeAll() }
        return pendingStalls
    }

    /// Continuous mode, at a window's end: the invocations closed since the last call and the
    /// counts since then, with every wanted invocation still open listed as running (its duration
    /// so far); records and counts start afresh, so memory is bounded by one window. Open
    /// invocations go on: one that spans the boundary is recorded, whole, in the window where it ends.
    mutating func takeWindow() -> WindowCalls {
        defer {
            records = []
            counts = Profile.InvocationCounts()
        }
        return WindowCalls(closed: records, running: running(), counts: counts)
    }

    /// Every wanted invocation still open, its duration so far (thread: the thread's index).
    func running() -> [ClosedInvocation] {
        var running: [ClosedInvocation] = []
        for (thread, stack) in open {
            for (depth, invocation) in stack.enumerated() where invocation.isWanted {
                running.append(record(of: invocation, traceID: stack[0].id, thread: thread, depth: depth))
            }
        }
        return running
    }

    /// The sampler's thread records were renumbered (a window was cut): `renumbered` maps each
    /// live thread's old index to its new one.
    mutating func renumber(_ renumbered: [Int: Int]) {
        open = Dictionary(uniqueKeysWithValues: open.compactMap { thread, stack in renumbered[thread].map { ($0, stack) } })
        cutThreads = Set(cutThreads.compactMap { renumbered[$0] })
        lostAfter = Dictionary(uniqueKeysWithValues: lostAfter.compactMap { thread, last in renumbered[thread].map { ($0, last) } })
    }

    /// The name of the function at `address`, from the lookup.
    mutating func name(of address: UInt) -> String {
        lookup.name(of: address)
    }

    /// How long an open invocation has run: last − first sample + P.
    private func duration(of invocation: Open) -> UInt64 {
        invocation.lastSeen - invocation.firstSeen + period
    }

    /// Whether invocations of the function starting at `function` pass the name pattern.
    private mutating func isWanted(_ function: UInt, address: UInt) -> Bool {
        guard let pattern = settings.functionPattern else { return true }
        if let known = wantedFunctions[function] { return known }
        let wanted = pattern.matches(lookup.name(of: address))
        wantedFunctions[function] = wanted
        return wanted
    }

    /// Closes `stack[depth...]`, deepest first, keeping the records that pass the filters.
    private mutating func close(_ stack: inout [Open], from depth: Int, thread: Int) {
        guard depth < stack.count else { return }
        let traceID = stack[0].id
        for index in (depth..<stack.count).reversed() {
            let invocation = stack[index]
            let duration = duration(of: invocation)
            if !invocation.isWanted || invocation.samples < settings.minimumSamples || duration < minimumDuration {
                counts.filtered += 1
            } else if records.count >= settings.capacity {
                counts.dropped += 1
            } else {
                counts.kept += 1
                if invocation.isCut { counts.cut += 1 }
                records.append(record(of: invocation, traceID: traceID, thread: thread, depth: index))
            }
        }
        stack.removeSubrange(depth...)
    }

    /// The record of `invocation` as it stands: start first sample − P/2, duration so far.
    private func record(of invocation: Open, traceID: UInt64, thread: Int, depth: Int) -> ClosedInvocation {
        ClosedInvocation(id: invocation.id, parentID: invocation.parentID, traceID: traceID, address: invocation.firstAddress,
                         startNanoseconds: invocation.firstSeen &- period / 2, durationNanoseconds: duration(of: invocation),
                         thread: Int32(thread), depth: Int32(depth), samples: Int32(clamping: invocation.samples), isCut: invocation.isCut)
    }

    /// Reports the outermost invocation that has run past the threshold and is not yet part of a
    /// report; the report covers it and everything open under it, so one stall is one report.
    /// Callers have run at least as long as their callees, so the search stops at the first
    /// invocation under the threshold. (Outermost, because the callees still running when it is
    /// found are the same stall; later callees that cross the threshold are new ones.)
    private mutating func checkStall(_ stack: inout [Open], thread: Int) {
        guard let threshold = stallThreshold else { return }
        for index in stack.indices where !stack[index].isReported {
            guard duration(of: stack[index]) > threshold else { return }
            for covered in index..<stack.count { stack[covered].isReported = true }
            pendingStalls.append(Stall(
                thread: thread,
                frames: stack.map { Stall.Frame(address: $0.address, runningNanoseconds: duration(of: $0)) },
                depth: index, threshold: threshold))
            counts.stalls += 1
            return
        }
    }
}
