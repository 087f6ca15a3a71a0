import Testing
@testable import StackSampler
import TestSupport

private func lines(_ bytes: [UInt8]) -> [String] {
    String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

@Suite struct FoldedRendererTests {
    @Test func mergesThreadsAndSumsIdenticalStacks() {
        let output = lines(handMadeProfile().rendered(as: .folded))
        #expect(output == [
            "[truncated];libz.so.1+0x40 1",
            "main;parse 8",
            "main;std::map<int:int>::find 2",
        ])
    }

    @Test func perThreadRootsKeepThreadsApartAndEscapeSemicolons() {
        let output = lines(handMadeProfile().rendered(as: .folded, options: ExportOptions(perThreadRoots: true)))
        #expect(output == [
            "[main tid=100];main;parse 5",
            "[main tid=100];main;std::map<int:int>::find 2",
            "[worker:1 tid=101];[truncated];libz.so.1+0x40 1",
            "[worker:1 tid=101];main;parse 3",
        ])
    }

    @Test func countsAddUpToTheSampleCount() {
        let profile = handMadeProfile()
        let total = lines(profile.rendered(as: .folded)).compactMap { Int($0.split(separator: " ").last!) }.reduce(0, +)
        #expect(total == profile.sampleCount)
    }
}
