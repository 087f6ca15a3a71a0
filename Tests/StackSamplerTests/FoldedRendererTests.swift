import Testing
@testable import StackSampler
import TestSupport

private func lines(_ bytes: [UInt8]) -> [String] {
    String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

@Suite struct FoldedRendererTests {
    @Test("folded output merges the threads and sums identical stacks, a truncated one marked")
    func mergesThreadsAndSumsIdenticalStacks() {
        let output = lines(handMadeProfile().rendered(as: .folded))
        #expect(output == [
            "[truncated];libz.so.1+0x40 1",
            "main;parse 8",
            "main;std::map<int:int>::find 2",
        ])
    }

    @Test("per-thread roots keep the threads apart; a semicolon in a thread's name becomes a colon")
    func perThreadRootsKeepThreadsApartAndEscapeSemicolons() {
        let output = lines(handMadeProfile().rendered(as: .folded, options: ExportOptions(perThreadRoots: true)))
        #expect(output == [
            "[main tid=100];main;parse 5",
            "[main tid=100];main;std::map<int:int>::find 2",
            "[worker:1 tid=101];[truncated];libz.so.1+0x40 1",
            "[worker:1 tid=101];main;parse 3",
        ])
    }

    @Test("the folded counts add up to the profile's sample count")
    func countsAddUpToTheSampleCount() {
        let profile = handMadeProfile()
        let total = lines(profile.rendered(as: .folded)).compactMap { Int($0.split(separator: " ").last!) }.reduce(0, +)
        #expect(total == profile.sampleCount)
    }
}
