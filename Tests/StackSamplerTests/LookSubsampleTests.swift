import Testing
@testable import StackSampler

/// Which threads without a ring wall mode looks at (`LookSubsample`), without a kernel.
@Suite struct LookSubsampleTests {
    private static let tenMilliseconds: UInt64 = 10_000_000

    @Test("up to its bound every thread is looked at at every wake")
    func everyThreadWhileFew() {
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 1)
        for count in [0, 1, LookSubsample.exactThreads] {
            subsample.threadsChanged(count: count) { _ in 0 }
            #expect(subsample.draw(ticks: 1) == nil, "\(count) threads")
        }
    }

    @Test("past its bound the wakes look at 200 threads a second in all, in rounds that look at each thread once, in no fixed rhythm")
    func roundsPastTheBound() {
        let threads = 1000, wakes = 20_000
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 7)
        subsample.threadsChanged(count: threads) { _ in 0 }
        var times = [Int](repeating: 0, count: threads)
        var lastDrawn = [Int](repeating: -1, count: threads)
        var gaps: [Int: Int] = [:]
        var rounds = Set<Int>()
        for wake in 0..<wakes {
            let drawn = subsample.draw(ticks: 1)
            let indices = drawn?.indices ?? []
            #expect(indices.count == 2 && Set(indices).count == 2 && indices.allSatisfy { (0..<threads).contains($0) }, "10 ms at 200 a second: 2 looks")
            if let drawn { rounds.insert(drawn.round) }
            for thread in indices {
                times[thread] += 1
                if lastDrawn[thread] >= 0 { gaps[wake - lastDrawn[thread], default: 0] += 1 }
                lastDrawn[thread] = wake
            }
        }
        // 40,000 looks in rounds of 1,000: every thread exactly 40 times.
        #expect(times.allSatisfy { $0 == 40 }, "looks per thread from \(times.min()!) to \(times.max()!), expected 40 each")
        #expect(rounds.count == 40, "\(rounds.count) rounds")
        // A round is 500 wakes, each thread at a random place in each: gaps from 1 to 1,000 wakes,
        // spread (triangular: 0.5 % at most 50, 2 % over 900), never one fixed length.
        let total = gaps.values.reduce(0, +)
        let short = gaps.filter { $0.key <= 50 }.values.reduce(0, +), long = gaps.filter { $0.key > 900 }.values.reduce(0, +)
        #expect(gaps.keys.max()! <= 1000, "a gap of \(gaps.keys.max()!) wakes: more than two rounds")
        #expect(Double(short) > 0.001 * Double(total) && Double(long) > 0.005 * Double(total),
                "gaps of 50 wakes or less: \(short), over 900: \(long), of \(total)")
    }

    @Test("the looks follow the ticks counted, not the wakes: a wake of 5 ticks at 10 ms looks at 10, at 1 ms one wake in five looks at one")
    func looksFollowTheTicks() {
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 3)
        subsample.threadsChanged(count: 50) { _ in 0 }
        #expect(subsample.draw(ticks: 5)?.indices.count == 10)
        var fast = LookSubsample(intervalNanoseconds: 1_000_000, seed: 3)
        fast.threadsChanged(count: 50) { _ in 0 }
        let looks = (0..<50).map { _ in fast.draw(ticks: 1)?.indices.count ?? -1 }
        #expect(looks.reduce(0, +) == 10 && looks.allSatisfy { $0 == 0 || $0 == 1 }, "\(looks)")
    }

    @Test("a thread count that changes between wakes is drawn within the new count, and never more than all of them")
    func changingThreadCounts() {
        var subsample = LookSubsample(intervalNanoseconds: 1_000_000_000, seed: 3)
        for count in [10, 4, 50, 9, 300] {
            subsample.threadsChanged(count: count) { _ in 0 }
            let drawn = subsample.draw(ticks: 1)?.indices
            if count <= LookSubsample.exactThreads {
                #expect(drawn == nil, "\(count) threads")
            } else {
                #expect(drawn.map { $0.count == min(count, 200) && Set($0).count == $0.count && $0.allSatisfy { (0..<count).contains($0) } } == true,
                        "\(count) threads: \(drawn ?? [])")
            }
        }
    }

    @Test("when the threads change, those looked at in the round wait for the next, and a new thread is looked at in this one")
    func threadsThatChangeKeepTheirRound() {
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 5)
        subsample.threadsChanged(count: 20) { _ in 0 }
        var lastRound = [Int](repeating: 0, count: 21)
        for _ in 0..<5 {
            let drawn = subsample.draw(ticks: 1)!
            for index in drawn.indices { lastRound[index] = drawn.round }
        }
        let looked = Set(lastRound.indices.filter { lastRound[$0] != 0 })
        #expect(looked.count == 10)
        // A 21st thread: the rest of the round is the 10 not looked at and the new one.
        subsample.threadsChanged(count: 21) { lastRound[$0] }
        var rest = Set<Int>()
        for _ in 0..<6 { rest.formUnion(subsample.draw(ticks: 1)!.indices) }
        #expect(rest == Set(0..<21).subtracting(looked), "the rest of the round: \(rest.sorted())")
    }
}
