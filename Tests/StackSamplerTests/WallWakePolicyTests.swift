import Testing
@testable import StackSampler

/// Wall mode's wake policy, fed what wakes find, without a kernel.
@Suite struct WallWakePolicyTests {
    private static let millisecond: UInt64 = 1_000_000

    /// A policy for 1 ms ticks that a wake may count up to 50 of.
    private func policy() -> WallWakePolicy {
        WallWakePolicy(intervalNanoseconds: Self.millisecond, maximumTicksForBuffer: 1000)
    }

    /// `count` wakes a tick apart from `start` that each end with `doubt`.
    private func wakes(_ policy: inout WallWakePolicy, _ count: Int, from start: UInt64 = 0, doubt: WakeDoubt = WakeDoubt()) {
        for wake in 0..<count {
            policy.wakeBegins(at: start + UInt64(wake) * Self.millisecond)
            policy.wakeEnded(doubt)
        }
    }

    @Test("calm wakes double the ticks per wake every four, up to the longest wake (50 ms of ticks)")
    func calmWakesGrowTheBatch() {
        var policy = policy()
        wakes(&policy, 3)
        #expect(policy.ticksPerWake == 1)
        wakes(&policy, 1)
        #expect(policy.ticksPerWake == 2)
        wakes(&policy, 4 * 10)
        #expect(policy.ticksPerWake == 50, "capped by WallWakePolicy.longestWakeNanoseconds")
        #expect(policy.ticksPerLook == policy.ticksPerWake, "no sleep seen: no look between the wakes")
    }

    @Test("the buffer's bound caps the batch below the longest wake")
    func bufferBoundsTheBatch() {
        var policy = WallWakePolicy(intervalNanoseconds: Self.millisecond, maximumTicksForBuffer: 6)
        wakes(&policy, 4 * 10)
        #expect(policy.ticksPerWake == 6)
    }

    @Test("a thread whose place is unknown brings the wakes back to one a tick, at once")
    func unknownPlaceResets() {
        var policy = policy()
        wakes(&policy, 4 * 4)
        #expect(policy.ticksPerWake == 16)
        wakes(&policy, 1, doubt: WakeDoubt(unknownPlace: true))
        #expect(policy.ticksPerWake == 1 && policy.ticksPerLook == 1)
        wakes(&policy, 3)
        #expect(policy.ticksPerWake == 1, "four calm wakes again before it grows")
    }

    @Test("a sleep long enough to be walked holds the looks at half its length; one too short to walk does not")
    func shortSleepsHoldTheLooks() {
        var policy = policy()
        wakes(&policy, 4 * 5)
        #expect(policy.ticksPerWake == 32)
        policy.sleepEnded(lasting: 50 * 1000) // 50 µs: no wake could walk it
        wakes(&policy, 1, from: 20 * Self.millisecond)
        #expect(policy.ticksPerLook == 32)
        policy.sleepEnded(lasting: 8 * Self.millisecond)
        wakes(&policy, 1, from: 21 * Self.millisecond)
        #expect(policy.ticksPerLook == 4, "a look at least every 4 ms falls inside every 8 ms sleep")
        #expect(policy.ticksPerWake == 32, "the counting wakes keep their batch")
    }

    @Test("a short sleep is remembered for one to two seconds, then forgotten")
    func sleepsAreForgotten() {
        var policy = policy()
        wakes(&policy, 4 * 5)
        policy.sleepEnded(lasting: 6 * Self.millisecond)
        wakes(&policy, 1, from: 100 * Self.millisecond)
        #expect(policy.ticksPerLook == 3)
        wakes(&policy, 1, from: 1_100 * Self.millisecond) // a new span: the sleep is in the last one
        #expect(policy.ticksPerLook == 3)
        wakes(&policy, 1, from: 2_200 * Self.millisecond) // two spans later
        #expect(policy.ticksPerLook == policy.ticksPerWake)
    }

    @Test("a sleep missed by the looks brings them to one a tick")
    func missedSleepLooksEveryTick() {
        var policy = policy()
        wakes(&policy, 4 * 5)
        wakes(&policy, 1, doubt: WakeDoubt(sleepMissed: true))
        #expect(policy.ticksPerLook == 1)
        #expect(policy.ticksPerWake == 32, "a missed sleep is no unknown place: the counting wakes keep their batch")
    }
}
