/// Counts samples per unique (thread, stack). Memory grows with the number of
/// unique stacks and threads, not with the length of the run.
struct StackAggregator: Sendable {
    /// One unique stack of one thread. Frames are leaf first, as the engine writes them.
    struct StackKey: Hashable, Sendable {
        var thread: Int
        var frames: [UInt]
        var cut: Profile.StackCut?
    }

    private(set) var counts: [StackKey: Int] = [:]
    private(set) var threads: [ThreadRecord] = []
    private var threadIndexByTID: [Int32: Int] = [:]
    private var lastStack: [Int: StackKey] = [:]
    // The losses below count samples as the profile does: with the periods a sample stands for.
    /// Samples whose stack was cut at the maximum depth (repeated wall ticks included, as for
    /// the three below), so that the count equals the samples of the `[truncated]` stacks.
    private(set) var truncatedSamples = 0
    /// Samples whose handler had too little stack left to walk (the interrupted PC only: `[leaf only]`).
    private(set) var leafOnlySamples = 0
    /// Samples whose walk ended early at a frame without unwind information, with the frames
    /// found so far (`[no unwind info]`).
    private(set) var unwindFailures = 0
    /// Samples whose walk read unmapped memory (the interrupted PC only: `[unwind fault]`).
    private(set) var unwindFaults = 0
    /// Timer periods the kernel merged into a later sample (overruns); that sample counts for them.
    private(set) var overrunPeriods = 0
    /// Samples whose walk crossed JIT code by frame pointers.
    private(set) var framePointerSamples = 0

    /// The record index of the live thread `tid`, creating one if the tid is new (named `name`,
    /// or else as /proc says).
    mutating func thread(_ tid: Int32, at time: UInt64, name: String? = nil) -> Int {
        if let index = threadIndexByTID[tid] { return index }
        let name = name ?? ThreadDirectory.name(of: tid) ?? "thread-\(tid)"
        threads.append(ThreadRecord(tid: tid, name: name, firstSeen: time, lastSeen: time))
        threadIndexByTID[tid] = threads.count - 1
        return threads.count - 1
    }

    /// Adds one sample, counted once per period it stands for; returns its stack.
    @discardableResult
    mutating func record(_ sample: Sample) -> StackKey {
        let index = thread(sample.tid, at: sample.timeNanoseconds)
        let periods = sample.periods
        countCut(sample.cut, periods)
        if sample.throughFramePointers { framePointerSamples += periods }
        let key = StackKey(thread: index, frames: sample.frames, cut: sample.cut)
        overrunPeriods += periods - 1
        counts[key, default: 0] += periods
        lastStack[index] = key
        threads[index].samples += periods
        threads[index].taken += 1
        threads[index].takenWeightSquares += periods * periods
        threads[index].lastSeen = max(threads[index].lastSeen, sample.timeNanoseconds)
        return key
    }

    /// Counts `samples` among the losses of `cut`, so that each loss equals the samples of the
    /// stacks its marker starts.
    private mutating func countCut(_ cut: Profile.StackCut?, _ samples: Int) {
        switch cut {
        case nil: break
        case .depth: truncatedSamples += samples
        case .leafOnly: leafOnlySamples += samples
        case .noUnwindInfo: unwindFailures += samples
        case .fault: unwindFaults += samples
        }
    }

    /// The record index of live thread `tid`, if known.
    func index(of tid: Int32) -> Int? { threadIndexByTID[tid] }

    /// Kernel ids of the live threads known so far.
    var liveThreadIDs: Dictionary<Int32, Int>.Keys { threadIndexByTID.keys }

    /// Samples taken so far from live thread `tid`, or nil if it is not known.
    func takenSamples(_ tid: Int32) -> Int? {
        threadIndexByTID[tid].map { threads[$0].taken }
    }

    /// Whether live thread `tid` has a last stack to repeat.
    func hasStack(_ tid: Int32) -> Bool {
        threadIndexByTID[tid].map { lastStack[$0] != nil } ?? false
    }

    /// Counts the last stack of `tid` `times` more (wall mode, thread did not run since), the
    /// last time at `time`; returns it.
    @discardableResult
    mutating func repeatLast(_ tid: Int32, at time: UInt64, times: Int = 1) -> StackKey? {
        guard let index = threadIndexByTID[tid], let key = lastStack[index] else { return nil }
        counts[key, default: 0] += times
        countCut(key.cut, times)
        threads[index].samples += times
        threads[index].taken += times
        threads[index].takenWeightSquares += times
        threads[index].lastSeen = time
        return key
    }

    /// Updates a live thread's name and CPU time. A thread born during the
    /// session counts its CPU time from zero, one that existed at start from now.
    mutating func observe(_ tid: Int32, cpu: Int64, name: String?, bornDuringSession: Bool, at time: UInt64) {
        let index = thread(tid, at: time, name: name)
        if threads[index].firstCPU < 0 { threads[index].firstCPU = bornDuringSession ? 0 : cpu }
        threads[index].lastCPU = max(threads[index].lastCPU, cpu)
        threads[index].lastSeen = time
        if let name { threads[index].name = name }
    }

    /// Updates the CPU time of a live thread already known.
    mutating func observeCPU(_ tid: Int32, cpu: Int64) {
        guard let index = threadIndexByTID[tid] else { return }
        threads[index].lastCPU = max(threads[index].lastCPU, cpu)
    }

    /// Notes whether a live thread blocks the profiling signal.
    mutating func noteSignalBlocked(_ tid: Int32, _ blocked: Bool, at time: UInt64) {
        threads[thread(tid, at: time)].blocksSignal = blocked
    }

    /// A fresh aggregator that goes on where this one stands at `time`: the live threads only,
    /// with no samples, their CPU counted from now and their last stacks kept (a wall-mode tick
    /// may count one again). What this one counted stays here: a window or a span ends with it.
    func continuation(at time: UInt64) -> StackAggregator {
        var next = StackAggregator()
        for (tid, index) in threadIndexByTID.sorted(by: { $0.value < $1.value }) {
            var record = threads[index]
            record.samples = 0
            record.taken = 0
            record.takenWeightSquares = 0
            record.firstCPU = record.lastCPU
            record.firstSeen = time
            record.lastSeen = time
            next.threads.append(record)
            let nextIndex = next.threads.count - 1
            next.threadIndexByTID[tid] = nextIndex
            if var stack = lastStack[index] {
                stack.thread = nextIndex
                next.lastStack[nextIndex] = stack
            }
        }
        return next
    }

    /// Takes the names, CPU times and signal masks of `session`'s live threads (the aggregator the
    /// thread scan keeps current). A thread this aggregator has not seen yet was born after it
    /// began, and counts its CPU from its first reading.
    mutating func adoptThreadFigures(from session: StackAggregator) {
        for (tid, sessionIndex) in session.threadIndexByTID {
            let figures = session.threads[sessionIndex]
            let index = thread(tid, at: figures.lastSeen, name: figures.name)
            if threads[index].firstCPU < 0 { threads[index].firstCPU = figures.firstCPU }
            threads[index].lastCPU = max(threads[index].lastCPU, figures.lastCPU)
            threads[index].lastSeen = max(threads[index].lastSeen, figures.lastSeen)
            threads[index].name = figures.name
            threads[index].blocksSignal = figures.blocksSignal
        }
    }

    /// Forgets the tid of a thread that has exited; its record and stacks stay. Returns its record index.
    @discardableResult
    mutating func threadEnded(_ tid: Int32) -> Int? {
        guard let index = threadIndexByTID.removeValue(forKey: tid) else { return nil }
        lastStack[index] = nil
        return index
    }
}
