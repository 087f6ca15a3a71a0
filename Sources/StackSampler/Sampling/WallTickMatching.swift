/// Where wall mode's tick matching puts what it counts: the session's routing, or a test's
/// record of it.
protocol WallTickCounts {
    /// Counts `sample`, and its thread's stack `owedTicks` more times.
    mutating func take(_ sample: Sample, owedTicks: Int)
    /// Counts the last stack of `tid` `times` more, at ticks `spacing` ns apart, the last at `now`.
    mutating func repeatLast(_ tid: Int32, at now: UInt64, times: Int, spacing: UInt64)
    /// Ticks of `tid` were lost where it may have been anywhere.
    mutating func ticksLost(_ tid: Int32)
}

extension SampleRouting: WallTickCounts {}

/// Wall mode's matching of a thread's ticks to its stacks, with no kernel in it
/// (`WallScheduler` finds where the thread was at each tick, and its CPU time then): a tick on a
/// core, or waiting for one, is counted with the stack known nearest to it in CPU time, or waits
/// for the sample that will be; a tick asleep is owed with the stack walked in that sleep. A tick
/// no stack reaches is counted lost, by reason (`lost`).
struct WallTickMatching {
    /// CPU time a thread can use without having moved: returning from the handler into the
    /// code it interrupted. Less than that since its stack was known, and that stack is counted.
    static let unmovedNanoseconds: Int64 = 5_000
    /// Ticks waiting for a sample, per thread, at most (consecutive ones at one CPU time are one).
    static let maximumPending = 4096
    /// A sleeping thread's owed ticks are counted at least this often (so that invocations and
    /// stalls see the sleep go on).
    private static let longestOwedNanoseconds: UInt64 = 100_000_000

    /// The tick: the sampling period.
    let intervalNanoseconds: UInt64
    /// CPU time between two samples of a running thread with the session's engine (the
    /// counters' period, or the timers' scheduler tick): the engine's, set by the scheduler at each wake.
    var sampleSpacing: Int64
    /// Ticks counted lost, by reason.
    private(set) var lost: [TickLoss: Int] = [:]

    /// Matching for ticks `intervalNanoseconds` apart, with samples `sampleSpacing` of CPU time apart.
    init(intervalNanoseconds: UInt64, sampleSpacing: Int64) {
        self.intervalNanoseconds = intervalNanoseconds
        self.sampleSpacing = sampleSpacing
    }

    /// Counts `ticks` ticks lost for `reason`.
    mutating func lose(_ ticks: Int, _ reason: TickLoss) {
        guard ticks > 0 else { return }
        lost[reason, default: 0] += ticks
    }

    /// Counts `ticks` of `thread` lost for `reason`, and tells the consumers when the thread may
    /// have been anywhere then: what was open on it before cannot be said to go on after them.
    mutating func lose<Counts: WallTickCounts>(_ ticks: Int, _ reason: TickLoss, of thread: WallThread, routing: inout Counts) {
        guard ticks > 0 else { return }
        lose(ticks, reason)
        if reason.leavesPlaceUnknown { routing.ticksLost(thread.tid) }
    }

    /// `due` more ticks of `thread` with its counted stack, owed; counted once they stand for
    /// `longestOwedNanoseconds`.
    func owe<Counts: WallTickCounts>(_ thread: WallThread, _ due: Int, at now: UInt64, routing: inout Counts) {
        thread.owe(due, at: now)
        if UInt64(thread.owedTicks) &* intervalNanoseconds >= Self.longestOwedNanoseconds { payOwed(thread, routing: &routing) }
    }

    /// Counts the ticks `thread` owes (asleep, its stack known), at their times.
    func payOwed<Counts: WallTickCounts>(_ thread: WallThread, routing: inout Counts) {
        guard thread.owedTicks > 0, let known = thread.known else { return }
        count(thread, known: known, at: thread.owedAt, ticks: thread.owedTicks, routing: &routing)
        thread.paid()
    }

    /// Takes in the thread's samples taken up to CPU time `cpu`.
    mutating func takeSamples<Counts: WallTickCounts>(of thread: WallThread, upTo cpu: Int64, routing: inout Counts) {
        while let next = thread.samples.first, next.cpu <= cpu {
            settle(thread, next: thread.samples.removeFirst(), routing: &routing)
        }
    }

    /// A tick of a thread on a core or waiting for one, at CPU time `cpu`: counted now if its
    /// stack is known there, else kept for the sample that will come.
    /// Counted at once when no later sample can be nearer: the next one comes the samples'
    /// spacing of CPU time after the last (`sampleSpacing`), so a tick less than half of that
    /// after a sample's CPU time is nearest to it.
    mutating func tick<Counts: WallTickCounts>(_ thread: WallThread, cpu: Int64, at now: UInt64, ticks: Int, routing: inout Counts) {
        if thread.pending.isEmpty, let known = thread.known, known.standsForRunning,
           cpu - known.cpu < (known.reach == Self.unmovedNanoseconds ? Self.unmovedNanoseconds : sampleSpacing / 2 - Self.unmovedNanoseconds) {
            return count(thread, known: known, at: now, ticks: ticks, routing: &routing)
        }
        if let last = thread.pending.last, last.cpu == cpu {
            thread.pending.updateLast { $0.ticks += ticks }
        } else if thread.pending.count < Self.maximumPending {
            thread.pending.append(WallThread.Tick(time: now, cpu: cpu, ticks: ticks))
        } else {
            lose(ticks, .tooManyWaiting, of: thread, routing: &routing)
        }
    }

    /// `next` is the thread's newest known stack: each waiting tick up to its CPU time is
    /// counted with the nearer, in CPU time, of the stack known before and `next`, among those
    /// that reach it (`Known.reach`); a tick neither reaches is counted lost.
    mutating func settle<Counts: WallTickCounts>(_ thread: WallThread, next: WallThread.Known, routing: inout Counts) {
        var reachedNext = false
        while let first = thread.pending.first, first.cpu <= next.cpu {
            let tick = thread.pending.removeFirst()
            let fromKnown = thread.known.map { tick.cpu - $0.cpu }
            let toNext = next.cpu - tick.cpu
            let knownReaches = !reachedNext && thread.known?.standsForRunning == true && fromKnown.map { $0 <= thread.known!.reach } == true
            let nextReaches = toNext <= next.reach
            if knownReaches, !nextReaches || fromKnown! <= toNext {
                count(thread, known: thread.known!, at: tick.time, ticks: tick.ticks, routing: &routing)
            } else if nextReaches {
                if !reachedNext { thread.know(next) }
                reachedNext = true
                count(thread, known: next, at: tick.time, ticks: tick.ticks, routing: &routing)
            } else {
                lose(tick.ticks, .noSampleNear, of: thread, routing: &routing)
            }
        }
        if !reachedNext { thread.know(next) }
    }

    /// The thread ends: its waiting ticks are counted with its last stack if it reaches them (no
    /// later sample can come), else counted lost.
    mutating func ending<Counts: WallTickCounts>(_ thread: WallThread, routing: inout Counts) {
        for tick in thread.pending {
            if let known = thread.known, known.standsForRunning, tick.cpu - known.cpu <= known.reach {
                count(thread, known: known, at: tick.time, ticks: tick.ticks, routing: &routing)
            } else {
                lose(tick.ticks, .noSampleNear, of: thread, routing: &routing)
            }
        }
        thread.pending.removeAll()
    }

    /// Counts `known` (the thread's current known stack) for `ticks` ticks a period apart, the
    /// last at `time`: the sample itself the first time, its stack again after.
    func count<Counts: WallTickCounts>(_ thread: WallThread, known: WallThread.Known, at time: UInt64, ticks: Int, routing: inout Counts) {
        if thread.counted {
            routing.repeatLast(thread.tid, at: time, times: ticks, spacing: intervalNanoseconds)
        } else {
            var sample = known.sample
            sample.timeNanoseconds = time
            routing.take(sample, owedTicks: ticks - 1)
            thread.counted = true
        }
    }
}
