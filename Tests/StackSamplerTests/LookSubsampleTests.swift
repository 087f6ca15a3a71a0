import Testing
@testable import StackSampler

/// Which threads without a ring wall mode looks at (`LookSubsample`), without a kernel.
@Suite struct LookSubsampleTests {
    private static let tenMilliseconds: UInt64 = 10_000_000

    @Test("up to its bound every thread is looked at at every wake")
    func everyThreadWhileFew() {
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 1)
        for count in [0, 1, LookSubsample.exactThreads] {
            #expect(subsample.draw(among: count, ticks: 1) == nil, "\(count) threads")
        }
    }

    @Test("past its bound the wakes look at 200 threads a second in all, each about as often as the others, in no fixed rhythm")
    func uniformDrawsPastTheBound() {
        let threads = 1000, wakes = 20_000
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 7)
        var times = [Int](repeating: 0, count: threads)
        var lastDrawn = [Int](repeating: -1, count: threads)
        var gaps: [Int: Int] = [:]
        for wake in 0..<wakes {
            let drawn = subsample.draw(among: threads, ticks: 1) ?? []
            #expect(drawn.count == 2 && Set(drawn).count == 2 && drawn.allSatisfy { (0..<threads).contains($0) }, "10 ms at 200 a second: 2 looks")
            for thread in drawn {
                times[thread] += 1
                if lastDrawn[thread] >= 0 { gaps[wake - lastDrawn[thread], default: 0] += 1 }
                lastDrawn[thread] = wake
            }
        }
        // 40 draws each expected (binomial, sd 6.3): 8 sd either side never fails by chance.
        let expected = Double(wakes * 2) / Double(threads)
        #expect(times.allSatisfy { abs(Double($0) - expected) < 8 * expected.squareRoot() }, "draws per thread from \(times.min()!) to \(times.max()!), expected \(expected)")
        // Gaps are geometric (mean 500 wakes), not one period: the draws cannot beat with a program's rhythm.
        let total = gaps.values.reduce(0, +)
        let short = gaps.filter { $0.key <= 50 }.values.reduce(0, +), long = gaps.filter { $0.key > 1500 }.values.reduce(0, +)
        #expect(Double(short) > 0.03 * Double(total) && Double(long) > 0.01 * Double(total),
                "gaps of 50 wakes or less: \(short), over 1,500: \(long), of \(total)")
    }

    @Test("the looks follow the ticks counted, not the wakes: a wake of 5 ticks at 10 ms looks at 10, at 1 ms one wake in five looks at one")
    func looksFollowTheTicks() {
        var subsample = LookSubsample(intervalNanoseconds: Self.tenMilliseconds, seed: 3)
        let drawn = subsample.draw(among: 50, ticks: 5)
        #expect(drawn?.count == 10)
        var fast = LookSubsample(intervalNanoseconds: 1_000_000, seed: 3)
        let looks = (0..<50).map { _ in fast.draw(among: 50, ticks: 1)?.count ?? -1 }
        #expect(looks.reduce(0, +) == 10 && looks.allSatisfy { $0 == 0 || $0 == 1 }, "\(looks)")
    }

    @Test("a thread count that changes between wakes is drawn within the new count, and never more than all of them")
    func changingThreadCounts() {
        var subsample = LookSubsample(intervalNanoseconds: 1_000_000_000, seed: 3)
        for count in [10, 4, 50, 9, 300] {
            let drawn = subsample.draw(among: count, ticks: 1)
            if count <= LookSubsample.exactThreads {
                #expect(drawn == nil, "\(count) threads")
            } else {
                #expect(drawn.map { $0.count == min(count, 200) && Set($0).count == $0.count && $0.allSatisfy { (0..<count).contains($0) } } == true,
                        "\(count) threads: \(drawn.map(Array.init) ?? [])")
            }
        }
    }
}
