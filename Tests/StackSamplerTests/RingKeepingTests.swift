import Testing
@testable import StackSampler

/// Which threads keep a context-switch ring while the threads are subsampled (`RingKeeping`).
@Suite struct RingKeepingTests {
    @Test("a thread that walked more sleeps than it ran gives its ring back; one that ran, or slept once or not at all, keeps it")
    func givesBackWhenItNaps() {
        #expect(RingKeeping.givesBack(ticksRunning: 0, sleepsWalked: 20), "20 naps a second, never on a core")
        #expect(RingKeeping.givesBack(ticksRunning: 3, sleepsWalked: 4))
        #expect(!RingKeeping.givesBack(ticksRunning: 50, sleepsWalked: 20), "on a core half its ticks")
        #expect(!RingKeeping.givesBack(ticksRunning: 0, sleepsWalked: 1), "one long sleep costs one walk")
        #expect(!RingKeeping.givesBack(ticksRunning: 0, sleepsWalked: 0))
    }

    @Test("a thread without a ring earns one by running 1 % of the time since its last look, not by a nap's few microseconds")
    func earnsRingByRunning() {
        let second: UInt64 = 1_000_000_000
        #expect(RingKeeping.earnsRing(cpu: 500_000_000, elapsed: second))
        #expect(RingKeeping.earnsRing(cpu: 10_000_000, elapsed: second))
        #expect(!RingKeeping.earnsRing(cpu: 200_000, elapsed: second), "20 naps of 10 µs")
        #expect(!RingKeeping.earnsRing(cpu: 0, elapsed: 0))
    }

    @Test("a thread gives its ring back once its ring brings more than a second's worth of 5,000 switches within a span, not before")
    func givesBackWhenItSwitchesOften() {
        #expect(!RingKeeping.switchesTooOften(40), "a thread that naps 20 times a second: 40 records")
        #expect(!RingKeeping.switchesTooOften(4_000), "a thread that naps 200 µs between spins of 300 µs")
        #expect(!RingKeeping.switchesTooOften(RingKeeping.maximumSwitchesPerSecond))
        #expect(RingKeeping.switchesTooOften(RingKeeping.maximumSwitchesPerSecond + 1))
        #expect(RingKeeping.switchesTooOften(400_000), "two threads handing a token on one core")
    }

    @Test("a span ends a second after the last one did, and only then")
    func spans() {
        var keeping = RingKeeping()
        let start: UInt64 = 5_000_000_000
        let ends = [start, start + 999_000_000, start + 1_000_000_000, start + 1_500_000_000].map { keeping.spanEnds(at: $0) }
        #expect(ends == [true, false, true, false], "\(ends)")
    }
}
