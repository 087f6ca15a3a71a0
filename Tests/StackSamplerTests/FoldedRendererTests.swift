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

    @Test("process and thread roots (record --follow-children --per-thread) are read back as threads of their process, a marker after them as a cut")
    func processRootsAreReadBackWithTheirThreads() throws {
        var profile = handMadeProfile()
        profile.threads[0].processID = 7
        profile.threads[0].processName = "server"
        profile.threads[1].processID = 8
        profile.threads[1].processName = "child"
        let options = ExportOptions(perThreadRoots: true, processRoot: true)
        let output = lines(profile.rendered(as: .folded, options: options))
        #expect(output.contains("[child pid=8];[worker:1 tid=101];[truncated];libz.so.1+0x40 1"))
        let read = try Profile(collapsedStacks: output.joined(separator: "\n"), command: "test")
        #expect(read.threads.map { "\($0.processName) \($0.processID) \($0.name) \($0.id)" }.sorted() == ["child 8 worker:1 101", "server 7 main 100"])
        #expect(read.stacks.filter { $0.cut == .depth }.map(\.count) == [1])
        #expect(lines(read.rendered(as: .folded, options: options)) == output)
    }

    @Test("a process root without a thread root stays a frame, and so does a marker after it")
    func aLoneProcessRootStaysAFrame() throws {
        let read = try Profile(collapsedStacks: "[server pid=7];[truncated];main 2\n[server pid=7];main;parse 3", command: "test")
        #expect(read.threads.isEmpty)
        #expect(read.stacks.allSatisfy { $0.cut == nil && read.name(of: $0.addresses[0]) == "[server pid=7]" })
        #expect(lines(read.rendered(as: .folded)) == ["[server pid=7];[truncated];main 2", "[server pid=7];main;parse 3"])
    }

    @Test("the folded counts add up to the profile's sample count")
    func countsAddUpToTheSampleCount() {
        let profile = handMadeProfile()
        let total = lines(profile.rendered(as: .folded)).compactMap { Int($0.split(separator: " ").last!) }.reduce(0, +)
        #expect(total == profile.sampleCount)
    }
}
