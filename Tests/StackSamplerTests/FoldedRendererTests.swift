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

    @Test("each way a stack stops short is marked on its root side, and read back as such")
    func everyCutIsMarkedAndReadBack() throws {
        var profile = handMadeProfile()
        profile.stacks = Profile.StackCut.allCases.enumerated().map { index, cut in
            Profile.Stack(thread: 0, addresses: [0x10, 0x20], count: index + 1, cut: cut)
        }
        let output = lines(profile.rendered(as: .folded))
        #expect(output == ["[leaf only];main;parse 3", "[no unwind info];main;parse 2", "[truncated];main;parse 1", "[unwind fault];main;parse 4"])
        let read = try Profile(collapsedStacks: output.joined(separator: "\n"), command: "test")
        #expect(Dictionary(uniqueKeysWithValues: read.stacks.map { ($0.count, $0.cut) }) == [1: .depth, 2: .noUnwindInfo, 3: .leafOnly, 4: .fault])
        #expect(read.stacks.allSatisfy { $0.addresses.count == 2 })
    }

    @Test("the folded counts add up to the profile's sample count")
    func countsAddUpToTheSampleCount() {
        let profile = handMadeProfile()
        let total = lines(profile.rendered(as: .folded)).compactMap { Int($0.split(separator: " ").last!) }.reduce(0, +)
        #expect(total == profile.sampleCount)
    }
}
