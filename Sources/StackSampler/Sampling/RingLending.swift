/// Wall mode: with every context-switch ring taken, which thread gives its ring to a thread
/// without one that runs. The lender is a thread asleep at least `longSleepNanoseconds` in a
/// sleep whose stack is known, its ring closable (`closable`): from then on it is counted as a
/// thread without a ring, unmoved, with that stack. At most one search per wake, and none while
/// no sleeper can have slept long enough since the last search found none.
struct RingLending {
    /// How long a lender has slept at least: a sleeper without a ring costs a CPU-time read per
    /// tick, a running thread without one a look through `/proc`.
    static let longSleepNanoseconds: UInt64 = 100_000_000

    /// Whether a ring was looked for at this wake.
    private var soughtThisWake = false
    /// With every ring taken, no thread can lend its ring before this time: the search that
    /// found no lender saw none asleep for `longSleepNanoseconds` yet, and none asleep longer
    /// than since then (a search over 1,000 threads at every wake was a tenth of the sampler's
    /// CPU with 1,000 threads that nap 50 ms).
    private var noLenderBefore: UInt64 = 0

    /// A wake begins: it may search once.
    mutating func wakeBegins() {
        soughtThisWake = false
    }

    /// Whether a ring may be looked for at `now`, given `rings`; if so, this wake's search is spent.
    mutating func maySeek(at now: UInt64, rings: SwitchRings) -> Bool {
        guard !soughtThisWake, !rings.refused, !rings.full || now >= noLenderBefore else { return false }
        soughtThisWake = true
        return true
    }

    /// The first of `threads` that can lend its ring at `now`, if any; with none, no search
    /// comes again before the oldest sleep seen has lasted `longSleepNanoseconds`.
    mutating func lender(among threads: some Sequence<WallThread>, at now: UInt64, rings: SwitchRings) -> WallThread? {
        var oldestSleep = now
        let lender = threads.first { thread in
            guard thread.ring != nil, case .asleep(let since) = thread.place else { return false }
            oldestSleep = min(oldestSleep, since)
            return Self.closable(thread, rings: rings) && now &- since >= Self.longSleepNanoseconds
        }
        if lender == nil { noLenderBefore = oldestSleep &+ Self.longSleepNanoseconds }
        return lender
    }

    /// Whether `thread`'s ring can be closed now: it is asleep in a sleep walked, with nothing
    /// unread in its ring and no tick or sample waiting.
    static func closable(_ thread: WallThread, rings: SwitchRings) -> Bool {
        guard case .asleep(let since) = thread.place else { return false }
        return thread.knownSleep == since && thread.pending.isEmpty && thread.samples.isEmpty && !rings.hasUnread(thread)
    }
}
