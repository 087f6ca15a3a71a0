import Foundation
import Testing

extension EndToEnd {
    /// fork and exec: children's exit statuses are untouched; with `%p` every process
    /// writes its own profile; `record --follow-children` merges the tree under
    /// `[name pid=N]` roots.
    @Suite struct ForkExec {
        @Test("with %p every forked child writes its own profile of its own work")
        func perProcessProfiles() throws {
            let directory = try ScratchDirectory.make("fork-percent-p")
            let run = try ProfiledRun.preload(.forker, [], profilePath: directory + "/tree-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout.contains("children ok"))
            let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("tree-") && $0.hasSuffix(".folded") }
            let profiles = try files.map { try FoldedProfile(contentsOf: directory + "/" + $0) }
            let children = profiles.filter { $0.inclusiveCount { $0 == "child_work" } > 0 }
            let parents = profiles.filter { $0.inclusiveCount { $0 == "parent_work" } > 0 }
            #expect(children.count == 3, "three forked children profiled themselves: \(files)")
            #expect(parents.count == 1)
            #expect(children.allSatisfy { $0.inclusiveCount { $0 == "parent_work" } == 0 })
        }

        @Test("without %p, children keep out of the parent's file")
        func sharedPath() throws {
            let directory = try ScratchDirectory.make("fork-shared")
            let run = try ProfiledRun.preload(.forker, [], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            #expect(profile.inclusiveCount { $0 == "parent_work" } > 0)
            #expect(profile.inclusiveCount { $0 == "child_work" } == 0)
            #expect(run.process.stderr.contains("has no %p"), "the exec'd child says why it is idle: \(run.process.stderr)")
        }

        @Test("record --follow-children merges the tree with a root per process")
        func followChildren() throws {
            let directory = try ScratchDirectory.make("fork-follow")
            let run = try ProfiledRun.record(.forker, [], options: ["--follow-children"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let roots = Set(profile.stacks.compactMap(\.frames.first))
            #expect(roots.allSatisfy { $0.hasPrefix("[forker pid=") }, "\(roots)")
            let childRoots = Set(profile.stacks.filter { $0.frames.contains("child_work") }.compactMap(\.frames.first))
            #expect(childRoots.count == 3)
            #expect(run.process.stderr.contains("merged the profiles of"))
        }
    }
}
