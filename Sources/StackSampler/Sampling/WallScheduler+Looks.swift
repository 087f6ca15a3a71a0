import CEngineHeader

/// Wall mode's looks at a thread through `/proc` (`BlockedThreadWalker`): for a thread without a
/// ring at each tick it is drawn for (`LookSubsample`), its ticks since its last look owed with
/// that look's stack; for any thread, a sleep's walk without a signal.
extension WallScheduler {
    /// A thread without a ring drawn for a look at this wake: its ticks since its last look up to
    /// the `due` last (all the others when the threads are subsampled, none else) are owed with
    /// the stack that look found (before its first look, or while that look's ticks wait for a
    /// sample, they are counted with what this look finds), and the `due` last with this look.
    func countLooked(_ thread: WallThread, at now: UInt64, due: Int, late: Int, doubt: inout WakeDoubt, routing: inout SampleRouting) {
        let skipped = skippedTicks(of: thread, upTo: now) - due
        thread.lookedThrough = now
        guard skipped > 0 else {
            return countTicks(of: thread, at: now, due: due, late: late, end: nil, doubt: &doubt, routing: &routing)
        }
        if oweWithLastLook(thread, skipped, at: now &- UInt64(due) &* intervalNanoseconds) {
            countTicks(of: thread, at: now, due: due, late: late, end: nil, doubt: &doubt, routing: &routing)
        } else {
            subsampledTicks += skipped
            countTicks(of: thread, at: now, due: due + skipped, late: late + skipped, end: nil, doubt: &doubt, routing: &routing)
        }
    }

    /// Owes `skipped` ticks of a subsampled thread, the last at `time`, with the stack its last
    /// look found; false when it has none to owe them with (no look yet, or that look's ticks
    /// still wait for a sample).
    func oweWithLastLook(_ thread: WallThread, _ skipped: Int, at time: UInt64) -> Bool {
        guard thread.known != nil, thread.pending.isEmpty else { return false }
        subsampledTicks += skipped
        thread.owe(skipped, at: time)
        return true
    }

    /// Where a thread first seen without a ring at the wake at `now` has its ticks counted from:
    /// after the last wake's, and not before its attach (a thread made during a batch of `due`
    /// ticks was not there at its first ones).
    func firstLookedThrough(_ tid: Int32, at now: UInt64, due: Int) -> UInt64 {
        let batchStart = lastWake ?? now &- UInt64(due) &* intervalNanoseconds
        let attached = probes.attachedAt(tid)
        guard attached > batchStart, attached <= now else { return batchStart }
        // The last tick of the batch before the attach: the ticks after it are the thread's.
        return now &- ((now - attached) / intervalNanoseconds + 1) &* intervalNanoseconds
    }

    /// The ticks of a thread without a ring from its last look to `time` (a tick's time).
    func skippedTicks(of thread: WallThread, upTo time: UInt64) -> Int {
        guard let through = thread.lookedThrough, time > through else { return 0 }
        return Int((time - through + intervalNanoseconds / 2) / intervalNanoseconds)
    }

    /// A thread without a ring not looked at since the last wake that counted: its ticks since
    /// its last look are owed with the stack that look found, or, with none known, counted lost
    /// for `reason` if one is given (else left for its next look).
    func oweSkipped(_ thread: WallThread, loseFor reason: TickLoss?, routing: inout SampleRouting) {
        guard thread.ring == nil, let lastWake else { return }
        let skipped = skippedTicks(of: thread, upTo: lastWake)
        guard skipped > 0 else { return }
        if oweWithLastLook(thread, skipped, at: lastWake) {
            thread.lookedThrough = lastWake
        } else if let reason {
            thread.lookedThrough = lastWake
            matching.lose(skipped, reason, of: thread, routing: &routing)
        }
    }

    /// A thread whose switches are not known: unmoved since its stack was counted, its ticks are
    /// owed (exact); else it is looked at through `/proc` now, and the tick now and the `late`
    /// ones are counted with what is found, as a late wake's always were; the other ticks of a
    /// wake that planned several are counted lost, not guessed. So while a thread has no ring,
    /// every wake counts one tick (`WakeDoubt.unknownPlace`): a sleeper unmoved at one wake may
    /// wake before the next, and a batch's ticks before that wake would be lost.
    func lookUnknown(_ thread: WallThread, at now: UInt64, due: Int, late: Int, routing: inout SampleRouting) {
        // Walked asleep and not given a core since (no system call): still there.
        if let sequence = thread.asleepSequence, thread.pending.isEmpty, thread.samples.isEmpty, thread.counted,
           probes.scheduleSequence(of: thread.tid) == sequence {
            matching.owe(thread, due, at: now, routing: &routing)
            return
        }
        let cpu = probes.cpuTime(of: thread.tid)
        if cpu >= 0, thread.pending.isEmpty, thread.samples.isEmpty, thread.counted, let known = thread.known,
           cpu - known.cpu < WallTickMatching.unmovedNanoseconds {
            matching.owe(thread, due, at: now, routing: &routing)
            return
        }
        matching.payOwed(thread, routing: &routing)
        matching.takeSamples(of: thread, upTo: .max, routing: &routing)
        guard cpu >= 0 else { return }
        let counted = min(due, late + 1)
        matching.lose(due - counted, .batchOfUnknownPlace, of: thread, routing: &routing)
        if thread.pending.isEmpty, let known = thread.known, cpu - known.cpu < WallTickMatching.unmovedNanoseconds {
            matching.count(thread, known: known, at: now, ticks: counted, routing: &routing)
        } else {
            let earnsRing = !subsampling || thread.known.map { RingKeeping.earnsRing(cpu: cpu - $0.cpu, elapsed: now &- $0.sample.timeNanoseconds) } == true
            if !look(at: thread, cpu: cpu, sleep: nil, at: now, due: counted, routing: &routing) { matching.lose(counted, .movedWhileWalked, of: thread, routing: &routing) }
            if thread.ring == nil, earnsRing { lendRing(to: thread, at: now, routing: &routing) }
        }
    }

    /// Walks a thread found asleep in the sleep that began at `sleep` (or, with `sleep` nil, one
    /// whose switches are unknown) at CPU time `cpu`. Walked, the ticks before are settled and
    /// these are counted with the walk. Found running without switches, the ticks wait for a
    /// sample. Found woken from `sleep`, or moving while walked, they are not counted: at those
    /// ticks the thread was in that sleep, whose stack is where it blocked, not where any sample
    /// of its running was (woken, it waits for a core at the end of the system call). Returns
    /// whether the ticks were counted (or will be, with a sample); the caller counts them lost if not.
    func look(at thread: WallThread, cpu: Int64, sleep: UInt64?, at now: UInt64, due: Int,
                      routing: inout SampleRouting) -> Bool {
        // A thread asleep by its switches stayed so while no switch came since they were read (and
        // its CPU time did not move: a tid reused before the scan saw its thread end has a ring
        // that never gets another record).
        let ring = sleep == nil ? nil : thread.ring
        let probes = probes
        let stayedAsleep = ring.map { ring in { !probes.hasUnreadSwitches(ring) && probes.cpuTime(of: thread.tid) == cpu } }
        // Without a ring: read before the walk, so that a core got during it or after changes it.
        let sequence = ring == nil ? probes.scheduleSequence(of: thread.tid) : -1
        switch walkBlocked(thread, cpu: cpu, at: now, stayedAsleep: stayedAsleep) {
        case .walked(let sample):
            var known = WallThread.Known(sample: sample, cpu: cpu, reach: WallTickMatching.unmovedNanoseconds)
            known.sleep = sleep
            if sleep != nil {
                thread.lookWalked(true)
                thread.sleepsWalkedInSpan += 1
            }
            matching.settle(thread, next: known, routing: &routing)
            if sequence >= 0 { thread.asleepSequence = sequence }
            matching.count(thread, known: known, at: now, ticks: due, routing: &routing)
            return true
        case .running where sleep == nil:
            thread.cpuAtLastTick = cpu
            matching.tick(thread, cpu: cpu, at: now, ticks: due, routing: &routing)
            return true
        case .running:
            thread.wokenFrom = sleep // its other ticks in that sleep are lost too, without a look
            thread.lookWalked(false)
            return false
        case .unsettled, .gone:
            return false
        }
    }

    /// Looks at `thread` through `/proc` (`BlockedThreadWalker.look`); its file is held from its
    /// second look on: a thread looked at once (a long sleep) needs none.
    func walkBlocked(_ thread: WallThread, cpu: Int64, at now: UInt64, stayedAsleep: (() -> Bool)?) -> BlockedThreadWalker.Look {
        defer { thread.lookedAt = true }
        guard thread.lookedAt else { return blockedWalker.look(at: thread.tid, cpu: cpu, now: now, stayedAsleep: stayedAsleep) }
        return withUnsafeMutablePointer(to: &thread.heldFile) { heldFile in
            blockedWalker.look(at: thread.tid, cpu: cpu, now: now, stayedAsleep: stayedAsleep, heldFile: heldFile)
        }
    }
}
