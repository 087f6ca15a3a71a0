import CEngineHeader
import Glibc

/// Wall mode: every tick of every attached thread is counted with the stack the thread had at
/// that moment, or counted lost with its reason (`lostTicks`); no tick is skipped silently.
///
/// Where a thread is at a tick comes from the kernel, not from guesses: its context switches
/// (`ss_switch_ring`: on a core, off it still runnable, or asleep) are read from memory the
/// kernel writes, with no system call. The sampler thread never signals a thread:
/// - a thread asleep is walked without a signal (`BlockedThreadWalker`) once per sleep, and
///   every tick of that sleep counts that stack, at no cost;
/// - a thread on a core, or waiting for one, is sampled by the engine's per-thread counter of
///   its user-space CPU time, whose signal is raised only while the thread runs in user space
///   (so never on its way into or out of a blocking call). Its stack at a tick is the stack at
///   the CPU time it had then (a thread waiting for a core is where it was preempted: its CPU
///   time does not move, and where the kernel allows it, its stack there is the kernel's copy,
///   `PreemptionSnapshots`, a sample at that CPU time). The tick waits for the sample nearest in
///   CPU time, one period of CPU at most away (samples come one period of user CPU time apart),
///   and is counted with it at the tick's own time.
/// A thread whose switches cannot be read (no ring: the bound, or the kernel refused) is looked
/// at through `/proc` at each tick instead (`WallScheduler+Looks.swift`). Which threads have a
/// ring: `RingKeeping`, `RingLending`; where a switch put a thread at a tick: `SwitchTimeline`.
final class WallScheduler: SamplerSchedule {
    /// What the scheduler asks of the kernel (`WallProbes`): all it knows of the threads comes from there.
    let probes: any WallProbes
    /// The threads' context-switch rings.
    private let rings: SwitchRings

    /// The tick: the sampling period.
    let intervalNanoseconds: UInt64
    /// CPU time between two samples of a running thread with the session's engine
    /// (`ss_engine_sample_spacing_ns`: the counters' period, or the timers' scheduler tick), read
    /// as it is used: the engine is settled after this schedule is made.
    private var sampleSpacing: Int64 { probes.sampleSpacing() }
    /// How far in CPU time a running thread's sample stands for it: a period, and twice the
    /// spacing of the samples where they come further apart (the timers, at each scheduler tick
    /// that finds the thread running: a tick between two takes the nearer).
    private var sampleReach: Int64 {
        let spacing = sampleSpacing, period = Int64(intervalNanoseconds)
        return spacing > period ? 2 * spacing : period
    }
    private(set) var missedTicks = 0
    /// Ticks counted lost, by reason.
    var lostTicks: [TickLoss: Int] { matching.lost }
    /// The matching of each thread's ticks to its stacks.
    var matching: WallTickMatching
    /// When the wakes that count ticks and the looks between them come (`WallWakePolicy`).
    private var policy: WallWakePolicy
    /// Ticks the next wake that counts ticks comes after.
    var ticksPerWake: Int { policy.ticksPerWake }
    /// Ticks between two looks at the threads' sleeps (`lookAtSleeps`).
    var ticksPerLook: Int { policy.ticksPerLook }
    /// When the threads with a ring are weighed (`RingKeeping`).
    private var ringKeeping = RingKeeping()
    /// Which sleeper gives its ring to a runner (`RingLending`).
    private var lending = RingLending()
    /// Threads that ended since the last wake (`threadsEnded`).
    private var endedThreads: [ss_ended_thread] = []
    /// Whether a thread was watched since the last wake (`watch`): the wake is not calm, so that
    /// a program that starts threads is watched tick by tick for a while (a thread that ends in
    /// the middle of a long batch is counted to its end all the same: `threadsEnded`).
    private var newThreadWatched = false
    private var threads: [Int32: WallThread] = [:]
    /// Walks the stacks of threads blocked in a system call, without a signal.
    let blockedWalker: BlockedThreadWalker
    /// The stacks where threads were preempted, for the ticks they wait for a core.
    private let preemptions: PreemptionSnapshots
    var preemptionCounts: (atCopy: Int, atNearestSample: Int) { (preemptions.exact, preemptions.withoutCopy) }
    /// Which threads without a ring each wake looks at (`LookSubsample`), and the last draw.
    private var subsample: LookSubsample
    /// When the last wake that counted ticks came (its last tick), if one did.
    var lastWake: UInt64?
    /// Ticks of threads without a ring that no wake drew, counted with the stack of their thread's
    /// last look (before its first, of that look).
    var subsampledTicks = 0
    /// Rings given back because their threads switched too often (`RingKeeping`).
    private(set) var ringsGivenBackForSwitches = 0
    /// Looks a second at threads without a ring when they are too many to look at each at every tick.
    var subsampleLooksPerSecond: Int { Int(LookSubsample.looksPerSecond) }
    /// The attached threads at the last wake, split by whether they have a ring: the same threads
    /// at the next wake (the common case) are not looked up again (a dictionary lookup per thread
    /// and tick was a tenth of the sampler's CPU with 1,000 threads asleep).
    private var split: (attached: [Int32], withRing: [WallThread], withoutRing: [WallThread]) = ([], [], [])
    /// Whether a ring was opened, closed or lent, or a thread forgotten, since `split` was made.
    private var splitStale = true

    /// A schedule ticking every `periodNanoseconds`, for an engine buffer of `bufferSlots` samples;
    /// it asks the kernel through `probes` (which walk stacks to the session's depth).
    init(periodNanoseconds: UInt64, bufferSlots: Int, probes: any WallProbes) {
        self.probes = probes
        intervalNanoseconds = periodNanoseconds
        rings = SwitchRings(probes: probes)
        matching = WallTickMatching(intervalNanoseconds: periodNanoseconds, sampleSpacing: Int64(periodNanoseconds))
        blockedWalker = BlockedThreadWalker(probes: probes)
        preemptions = PreemptionSnapshots(probes: probes)
        let fixed = probes.fixed
        let samplesPerTickAndCore = max(1, Int(periodNanoseconds / max(1, fixed.counterPeriod)))
        // A wake counts at most a quarter of the engine's buffer at the pace of the counters'
        // samples on every core.
        policy = WallWakePolicy(intervalNanoseconds: periodNanoseconds,
                                maximumTicksForBuffer: bufferSlots / (4 * fixed.cores * samplesPerTickAndCore))
        subsample = LookSubsample(intervalNanoseconds: periodNanoseconds, seed: fixed.seed)
    }

    /// A sample of a running thread, kept until its thread's ticks are taken in at the next
    /// wake, in the order of their CPU times (the sampler may wake late: ticks due before the
    /// sample come first); it is counted only with ticks.
    func route(_ sample: Sample, into routing: inout SampleRouting) {
        // A sample counts for the ticks it is taken for, one each: a timer's overrun (the periods
        // of CPU it covers, three at 1 ms with a 4 ms scheduler tick) is no tick of its own.
        // Counted as periods, the first tick that took each timer sample counted four: a thread
        // that ran 1,000 ticks had 1,735 samples.
        var sample = sample
        sample.periods = 1
        guard let cpu = sample.cpuNanoseconds else { return routing.take(sample) }
        let thread = state(of: sample.tid, watched: false)
        thread.signalled = true
        // A subsampled thread's samples wait for its next look, which may be seconds away: only
        // the newest ones can be nearest to its ticks then.
        if thread.samples.count >= WallTickMatching.maximumPending { _ = thread.samples.removeFirst() }
        thread.samples.append(WallThread.Known(sample: sample, cpu: cpu, reach: sampleReach))
    }

    /// Not called: `route` takes every sample.
    func arrived(_ sample: Sample) -> Int { 0 }

    /// Its samples are taken in, and its waiting ticks counted with its last stack if it reaches
    /// them (no later sample can come), else counted lost.
    func threadEnding(_ tid: Int32, routing: inout SampleRouting) {
        guard let thread = threads[tid] else { return }
        oweSkipped(thread, loseFor: .endedBeforeLook, routing: &routing)
        matching.payOwed(thread, routing: &routing)
        matching.takeSamples(of: thread, upTo: .max, routing: &routing)
        matching.ending(thread, routing: &routing)
    }

    /// Every sleeping thread's owed ticks are counted: the counts are about to be read.
    func settle(routing: inout SampleRouting) {
        for thread in threads.values {
            oweSkipped(thread, loseFor: nil, routing: &routing)
            matching.payOwed(thread, routing: &routing)
        }
    }

    /// Every thread's samples and ticks are taken in, and every ring is closed.
    func finishing(routing: inout SampleRouting) {
        for tid in threads.keys.sorted() {
            threadEnding(tid, routing: &routing)
            threadEnded(tid)
        }
    }

    /// The stopping thread's samples from `time` on, already drained, are dropped before its
    /// last ticks are counted: a tick would take the nearest of them, in the profiler's exit code.
    /// A tick left without a sample within reach is counted lost.
    func stopping(_ tid: Int32, from time: UInt64) {
        threads[tid]?.samples.removeAll { $0.sample.timeNanoseconds >= time }
    }

    /// Opens the threads' rings now, not at the next wake: a thread's ticks before its ring is
    /// open are lost, and the next wake may come tens of milliseconds later (the first one after
    /// the start, or the end of a batch during which the thread started).
    func watch(_ threads: ArraySlice<Int32>) {
        for tid in threads where self.threads[tid]?.ringTried != true {
            _ = state(of: tid, watched: true)
            newThreadWatched = true
        }
    }

    /// A thread started by pthread_create wakes a sampler asleep for a batch of ticks.
    var watchesNewThreads: Bool { true }

    func threadEnded(_ tid: Int32) {
        guard let thread = threads.removeValue(forKey: tid) else { return }
        splitStale = true
        matching.lose(thread.pending.reduce(0) { $0 + $1.ticks }, .noSampleNear)
        if let ring = thread.ring { rings.close(ring) }
        preemptions.forget(tid)
        probes.closeHeldFile(thread.heldFile)
    }

    /// `due` ticks are counted, at the times they were due (the last one `now`): with the
    /// thread's switches a late wake loses nothing; a thread without them has its late ticks
    /// counted with the stack found now. Threads that ended since the last wake (`threadsEnded`)
    /// have their ticks up to their end counted too.
    func wake(at now: UInt64, due: Int, late: Int, threads attached: ArraySlice<Int32>, routing: inout SampleRouting) {
        missedTicks += late
        matching.sampleSpacing = sampleSpacing
        lending.wakeBegins()
        var doubt = WakeDoubt(unknownPlace: newThreadWatched)
        newThreadWatched = false
        policy.wakeBegins(at: now)
        defer { policy.wakeEnded(doubt) }
        let ended = endedThreads
        endedThreads = []
        for note in ended {
            guard let thread = threads[note.tid] else { continue }
            countTicks(of: thread, at: now, due: due, late: late, end: (note.cpu_ns, note.time_ns), doubt: &doubt, routing: &routing)
            // Gone for good: what its ticks waited for is counted now, and its ring and held file
            // are given back (a thread no scan saw and no tick counted would keep them otherwise).
            threadEnding(note.tid, routing: &routing)
            threadEnded(note.tid)
        }
        if splitStale || !attached.elementsEqual(split.attached) {
            split = ([], [], [])
            for tid in attached {
                let thread = state(of: tid, watched: true)
                split.attached.append(tid)
                if thread.ring != nil {
                    split.withRing.append(thread)
                } else {
                    // Its ticks from this wake's first on are for its looks (those after its attach).
                    if thread.lookedThrough == nil { thread.lookedThrough = firstLookedThrough(tid, at: now, due: due) }
                    split.withoutRing.append(thread)
                }
            }
            splitStale = false
            let withoutRing = split.withoutRing
            subsample.threadsChanged(count: withoutRing.count) { withoutRing[$0].lookRound }
        }
        let (withRing, withoutRing) = (split.withRing, split.withoutRing)
        for thread in withRing {
            countTicks(of: thread, at: now, due: due, late: late, end: nil, doubt: &doubt, routing: &routing)
            giveBackRingIfSwitchingOften(thread, at: now, routing: &routing)
        }
        if ringKeeping.spanEnds(at: now) { keepRings(of: withRing, routing: &routing) }
        // Those without a ring, a look each at every tick (so a wake each tick); a random
        // subsample of them when they are too many, whose wakes may then count several ticks:
        // what a drawn thread's look could not place is no doubt about this wake's other ticks,
        // which its next look counts whatever the wake (100 wakes a second instead of 20 were a
        // sixth of the sampler's CPU with 1,000 napping threads).
        if let chosen = subsample.draw(ticks: due) {
            var drawnDoubt = WakeDoubt()
            for index in chosen.indices {
                withoutRing[index].lookRound = chosen.round
                countLooked(withoutRing[index], at: now, due: 1, late: 0, doubt: &drawnDoubt, routing: &routing)
            }
        } else {
            if !withoutRing.isEmpty { doubt.unknownPlace = true }
            for thread in withoutRing { countLooked(thread, at: now, due: due, late: late, doubt: &doubt, routing: &routing) }
        }
        lastWake = now
    }

    /// Between the wakes that count ticks: a thread whose newest switch (left in its ring, unless
    /// the ring fills) put it to sleep before `tick`, in a sleep not walked yet, is walked now,
    /// before that sleep ends; the walk is kept for the wake that counts its ticks. The threads'
    /// running needs no look: its ticks are counted later from the switches and samples, as
    /// exactly as now.
    func lookAtSleeps(at tick: UInt64) {
        for thread in threads.values {
            guard thread.ring != nil else { continue }
            // Left in the ring unless it fills: the wake that counts reads it.
            rings.readIfFilling(thread)
            // Where it is: its newest switch, read or not (none since the last wake: the place that wake found).
            let newest = rings.newest(of: thread)
            let place = newest.map(WallThread.Place.init) ?? thread.place
            guard case .asleep(let since) = place, since <= tick, thread.knownSleep != since, thread.walkedSleeps.last?.sleep != since,
                  thread.wokenFrom != since else { continue }
            let cpu = probes.cpuTime(of: thread.tid)
            guard cpu >= 0 else { continue }
            let (rings, probes) = (rings, probes)
            let stayedAsleep = { rings.newest(of: thread)?.time_ns == newest?.time_ns && probes.cpuTime(of: thread.tid) == cpu }
            switch walkBlocked(thread, cpu: cpu, at: tick, stayedAsleep: stayedAsleep) {
            case .walked(let sample):
                var known = WallThread.Known(sample: sample, cpu: cpu, reach: WallTickMatching.unmovedNanoseconds)
                known.sleep = since
                thread.walkedSleeps.append(known)
                thread.lookWalked(true)
                thread.sleepsWalkedInSpan += 1
            case .running:
                thread.wokenFrom = since
                thread.lookWalked(false)
            case .unsettled, .gone: break
            }
        }
    }

    /// Threads that detached themselves as they ended, with their CPU time then: the next wake
    /// counts their ticks up to that moment (they are no longer among the attached threads).
    func threadsEnded(_ notes: [ss_ended_thread]) {
        endedThreads += notes
    }

    /// Counts `thread`'s `due` ticks, the last at `now`; with `end` (its CPU time as it ended, and
    /// when), only those up to then, from that CPU time. Notes in `doubt` why a tick's stack could
    /// not be known from its switches.
    func countTicks(of thread: WallThread, at now: UInt64, due: Int, late: Int, end: (cpu: Int64, time: UInt64)?,
                            doubt: inout WakeDoubt, routing: inout SampleRouting) {
        // Asleep since a sleep already walked, and no switch since: its ticks owed, counted in
        // one step later (`payOwed`). The common case of a program of many threads, first.
        if end == nil, case .asleep(let since) = thread.place, thread.knownSleep == since, !rings.hasUnread(thread) {
            matching.owe(thread, due, at: now, routing: &routing)
            return
        }
        defer { thread.forgetWalkedSleepsLeft() }
        let before = thread.place
        let ringRead = probes.now()
        var records = rings.takeSwitches(of: thread)
        noteSleeps(of: thread, from: before, records: records)
        if thread.ring == nil || thread.place == .unknown || records.contains(where: { $0.kind == SS_SWITCH_LOST }) {
            if let end {
                matching.lose(SwitchTimeline.ticks(due, at: now, spacing: intervalNanoseconds, upTo: end.time), .placeUnknown, of: thread, routing: &routing)
                doubt.unknownPlace = true
                return
            }
            lookUnknown(thread, at: now, due: due, late: late, routing: &routing)
            doubt.unknownPlace = true
            return
        }
        matching.payOwed(thread, routing: &routing)
        // Its CPU time at a known moment: the ticks' CPU times are that less its time on a core
        // from each tick to that moment. Ended: its CPU time as it ended. Preempted at the last
        // tick and no switch since: its CPU time then, until the ring was read. Else read now, and
        // the ring read again after it, so that every switch up to that moment is counted (a
        // thread preempted after the first read would be taken as running until now: its ticks
        // given earlier stacks).
        let cpu: Int64, read: UInt64
        if let end {
            (cpu, read) = end
        } else if thread.place == .preempted && before == .preempted && records.isEmpty && thread.cpuAtLastTick >= 0 {
            (cpu, read) = (thread.cpuAtLastTick, ringRead)
        } else {
            (cpu, read) = probes.promptCPUTime(of: thread.tid)
            let placeBefore = thread.place
            let later = rings.takeSwitches(of: thread)
            noteSleeps(of: thread, from: placeBefore, records: later)
            if later.contains(where: { $0.kind == SS_SWITCH_LOST }) {
                lookUnknown(thread, at: now, due: due, late: late, routing: &routing)
                doubt.unknownPlace = true
                return
            }
            records += later
        }
        guard cpu >= 0 else {
            matching.lose(due, .threadGone, of: thread, routing: &routing)  // counted lost, not dropped
            return
        }
        thread.cpuAtLastTick = cpu
        // Where it was preempted, exactly: samples at the CPU time of each wait for a core.
        let preempted = preemptions.stacks(of: thread.tid, records: records, read: read, reach: Int64(intervalNanoseconds),
                                           takesSignal: takesSignal(thread)) { time in
            cpu - SwitchTimeline.place(at: time, from: before, records: records, until: read).1
        }
        for known in preempted { thread.samples.insert(known, beforeFirst: { $0.cpu > known.cpu }) }
        for late in (0..<due).reversed() {
            let time = now &- UInt64(late) &* intervalNanoseconds
            // Before it was attached it was not sampled (most often, it did not exist yet), and
            // after it ended it is not there.
            if time < thread.attachedSince { continue }
            if let end, time > end.time { continue }
            // After it was attached and before its ring was open, where it was is not known.
            guard time >= thread.watchedSince else {
                matching.lose(1, .notWatchedYet, of: thread, routing: &routing)
                doubt.unknownPlace = true // a new thread: the next one's first ticks are lost at one wake's length
                continue
            }
            // Its CPU time at the tick: less what it ran since (asleep then, a sample taken after
            // its sleep ended must not be taken in before the sleep's ticks are counted).
            let (place, running) = SwitchTimeline.place(at: time, from: before, records: records, until: read)
            matching.takeSamples(of: thread, upTo: cpu - running, routing: &routing)
            switch place {
            case .asleep(let since):
                if let known = thread.known, known.sleep == since {
                    matching.count(thread, known: known, at: time, ticks: 1, routing: &routing)
                } else if let index = thread.walkedSleeps.firstIndex(where: { $0.sleep == since }) {
                    // Walked by a look between the wakes that count (`lookAtSleeps`); the sleeps
                    // walked before it are over.
                    let walked = thread.walkedSleeps[index]
                    thread.walkedSleeps.removeFirst(index + 1)
                    matching.settle(thread, next: walked, routing: &routing)
                    matching.count(thread, known: walked, at: time, ticks: 1, routing: &routing)
                } else if thread.place == place, end == nil, thread.wokenFrom != since {
                    // Woken (or moving) before it could be walked: lost. How long the sleep was,
                    // the switch that ends it will tell (`noteSleeps`).
                    if !look(at: thread, cpu: cpu, sleep: since, at: time, due: 1, routing: &routing) { matching.lose(1, .sleepOverUnwalked, of: thread, routing: &routing) }
                } else {
                    matching.lose(1, .sleepOverUnwalked, of: thread, routing: &routing)
                    let length = SwitchTimeline.length(ofSleepFrom: since, in: records)
                    // Longer than two ticks: a look at the first tick in it would have walked it.
                    if length.map({ $0 >= 2 * intervalNanoseconds }) ?? true { thread.lookWalked(true) }
                    if thread.walkable, length.map({ $0 >= WallWakePolicy.shortestWalkableSleepNanoseconds }) ?? true {
                        doubt.sleepMissed = true
                    }
                }
            case .onCore, .preempted:
                thread.ticksRunningInSpan += 1
                matching.tick(thread, cpu: cpu - running, at: time, ticks: 1, routing: &routing)
            case .unknown: matching.lose(1, .placeUnknown, of: thread, routing: &routing)
            }
        }
        matching.takeSamples(of: thread, upTo: .max, routing: &routing)
    }

    /// Whether `thread` takes the engine's signal (`WallThread.takesSignal`), its mask asked once
    /// before its first sample.
    private func takesSignal(_ thread: WallThread) -> Bool {
        if !thread.signalled, thread.blockedSignalBeforeSample == nil { thread.blockedSignalBeforeSample = probes.blocksSignal(thread.tid) }
        return thread.takesSignal
    }

    /// Notes the length of each sleep long enough to be walked that ended in `records` (`thread`'s
    /// switches since `before`), if the thread's sleeps are walked when a look comes (`WallThread.walkable`).
    private func noteSleeps(of thread: WallThread, from before: WallThread.Place, records: [ss_switch]) {
        guard thread.walkable else { return }
        var sleepStart: UInt64? = if case .asleep(let since) = before { since } else { nil }
        for record in records {
            switch record.kind {
            case SS_SWITCH_OUT_BLOCKED: sleepStart = record.time_ns
            case SS_SWITCH_IN:
                if let start = sleepStart, record.time_ns > start { policy.sleepEnded(lasting: record.time_ns - start) }
                sleepStart = nil
            default: sleepStart = nil
            }
        }
    }

    /// `runner`, a thread without a ring that has run, gets one: a free one (a thread that had one
    /// ended), else a sleeper's (`RingLending`), which gets a ring back if the runner's cannot be
    /// opened. One search per wake.
    func lendRing(to runner: WallThread, at now: UInt64, routing: inout SampleRouting) {
        guard now >= runner.noRingBefore, lending.maySeek(at: now, rings: rings) else { return }
        var lender: WallThread?
        if rings.full {
            guard let sleeper = lending.lender(among: threads.values, at: now, rings: rings) else { return }
            lender = sleeper
            takeRing(of: sleeper, routing: &routing)
        }
        splitStale = true
        runner.ringTried = false
        _ = state(of: runner.tid, watched: true)
        if runner.ring == nil, let sleeper = lender { sleeper.ringTried = false }
    }

    /// Whether there are more threads without a ring than are looked at at every tick.
    var subsampling: Bool { split.withoutRing.count > LookSubsample.exactThreads }

    /// Right after this wake took in its switches: a thread whose ring brought too many in this
    /// span (`RingKeeping`) gives it back, whatever its state (what the ring brought after this
    /// wake's read is lost with it: its ticks from the next wake on are its looks'), and gets none
    /// for a while. Checked at every wake, so that a thread switching thousands of times a second
    /// pays for its ring some milliseconds, not the span's second.
    private func giveBackRingIfSwitchingOften(_ thread: WallThread, at now: UInt64, routing: inout SampleRouting) {
        guard thread.ring != nil, RingKeeping.switchesTooOften(thread.switchesInSpan) else { return }
        thread.noRingBefore = now &+ RingKeeping.refusalNanoseconds
        ringsGivenBackForSwitches += 1
        takeRing(of: thread, routing: &routing)
    }

    /// At the end of a span (`RingKeeping`), while the threads are subsampled: the threads of
    /// `withRing` that walked more sleeps than they ran give their rings back, where their rings
    /// can be closed now (asleep in a sleep walked, nothing unread or waiting: else at the next
    /// span). Every thread's span begins again.
    private func keepRings(of withRing: [WallThread], routing: inout SampleRouting) {
        let subsampling = subsampling
        for thread in withRing {
            defer { (thread.ticksRunningInSpan, thread.sleepsWalkedInSpan, thread.switchesInSpan) = (0, 0, 0) }
            guard subsampling, thread.ring != nil,
                  RingKeeping.givesBack(ticksRunning: thread.ticksRunningInSpan, sleepsWalked: thread.sleepsWalkedInSpan),
                  RingLending.closable(thread, rings: rings) else { continue }
            takeRing(of: thread, routing: &routing)
        }
    }

    /// Closes the ring of `sleeper`, asleep in a sleep whose stack is known: from now on it is
    /// counted as a thread without a ring (unmoved, that stack), and is not given a ring again
    /// unless it runs (`lendRing`).
    private func takeRing(of sleeper: WallThread, routing: inout SampleRouting) {
        guard let ring = sleeper.ring else { return }
        matching.payOwed(sleeper, routing: &routing)
        rings.close(ring)
        preemptions.forget(sleeper.tid)
        sleeper.ring = nil
        sleeper.backlog = []
        sleeper.switchesInSpan = 0 // counted afresh if it gets a ring again
        sleeper.place = .unknown
        splitStale = true
    }

    /// The state kept for `tid`, made the first time; its ring is opened the first time the
    /// thread is `watched` (a tick for an attached thread), never for a sample alone, which may
    /// be drained after its thread ended (its tid then free for another process's thread).
    private func state(of tid: Int32, watched: Bool) -> WallThread {
        if let thread = threads[tid], !watched || thread.ringTried { return thread }
        let thread = threads[tid] ?? WallThread(tid: tid)
        threads[tid] = thread
        guard watched, !thread.ringTried else { return thread }
        thread.ringTried = true
        splitStale = true
        if let ring = rings.open(for: tid) {
            thread.ring = ring
            thread.lookedThrough = nil
            thread.watchedSince = probes.now()
            thread.attachedSince = probes.attachedAt(tid)
            preemptions.watch(tid, at: thread.watchedSince)
            // Where it is now; the ring, open before this look, says every change after it. The
            // calling thread runs (the session's starting thread: its own syscall file shows the
            // read of it, which would make it asleep until its next switch, its ticks lost).
            if tid == probes.currentThread() {
                thread.place = .onCore
            } else {
                switch blockedWalker.position(of: tid) {
                case .none: thread.place = .onCore
                case .some(.some): thread.place = .asleep(since: probes.now())
                case .some(.none): break
                }
            }
        }
        return thread
    }

}
