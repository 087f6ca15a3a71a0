import Testing
@testable import StackSampler
import TestSupport

/// Merging the profiles of a process tree keeps each process's threads, names and mappings apart.
@Suite struct ProcessTreeTests {
    /// `handMadeProfile` as process `pid`, started at `start`, with one mapping.
    private func process(_ pid: Int32, start: UInt64) -> Profile {
        var profile = handMadeProfile()
        profile.processID = pid
        profile.processName = "app\(pid)"
        profile.startNanoseconds = start
        for index in profile.threads.indices {
            profile.threads[index].processID = pid
            profile.threads[index].processName = "app\(pid)"
        }
        profile.modules = [Module(path: "/bin/app", start: 0, end: 0x1000, fileOffset: 0, buildID: "ab")]
        profile.losses.droppedSamples = 2
        return profile
    }

    @Test("merged processes keep their threads, samples, losses and names; an address of each is mapped apart, each stack under its process root")
    func eachProcessKeepsItsThreadsNamesAndMappings() throws {
        let parent = process(10, start: 1_000), child = process(11, start: 5_000)
        let merged = try #require(Profile.mergingProcesses([parent, child], root: 10, command: "app"))
        #expect(merged.sampleCount == parent.sampleCount + child.sampleCount)
        #expect(merged.threads.map(\.processID) == [10, 10, 11, 11])
        #expect(merged.processID == 10 && merged.startNanoseconds == 1_000)
        #expect(merged.durationNanoseconds == 5_000 + child.durationNanoseconds - 1_000)
        #expect(merged.losses.droppedSamples == 4)
        // The same address in two processes stays two addresses, each with its own name and mapping.
        #expect(Set(merged.frames.keys).count == parent.frames.count * 2)
        #expect(merged.modules.count == 2 && merged.modules[0].start != merged.modules[1].start)
        for stack in merged.stacks {
            for address in stack.addresses {
                #expect(merged.modules.filter { address >= $0.start && address < $0.end }.count == 1, "\(address)")
            }
        }
        let roots = Set(merged.stacks.map { merged.shownFrames(of: $0, options: ExportOptions(processRoot: true)).first.map(merged.name(of:)) })
        #expect(roots == ["[app10 pid=10]", "[app11 pid=11]"])
        #expect(merged.stacks.filter { $0.thread >= 2 }.map(\.count).reduce(0, +) == child.sampleCount)
    }
}
