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

        /// The tree is merged from each process's raw recording, named through its own
        /// mappings: a merged pprof keeps its units and mappings, as a single-process one does
        /// (merging through folded text lost them).
        @Test("record --follow-children: a merged pprof keeps cpu/nanoseconds and the mappings",
              .enabled(if: GoPprof.executable != nil, GoPprof.skipReason))
        func followChildrenPprof() throws {
            let directory = try ScratchDirectory.make("fork-follow-pprof")
            let pprof = directory + "/tree.pb.gz"
            let run = try ProfiledRun.record(.forker, [], options: ["--follow-children", "-o", pprof], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            #expect(Set(profile.stacks.filter { $0.frames.contains("child_work") }.compactMap(\.frames.first)).count == 3)
            let raw = try GoPprof.raw(pprof, in: directory)
            #expect(raw.contains("cpu/nanoseconds"), "no cpu/nanoseconds sample type:\n\(raw.prefix(400))")
            // pprof shows each file's mapping once (it merges the processes' copies), with its build id.
            let mappings = raw.split(separator: "\n").drop { !$0.hasPrefix("Mappings") }
            #expect(mappings.contains { $0.contains("/forker ") && $0.hasSuffix("[FN]") && $0.split(separator: " ").count >= 4 },
                    "no mapping of the forker executable with its build id: \(Array(mappings))")
            let traces = try GoPprof.stacks(pprof, in: directory)
            let childSamples = traces.filter { $0.key.contains("child_work") }.values.reduce(0, +)
            #expect(childSamples >= 10, "the children's work is in the merged pprof: \(traces.keys.prefix(5))")
        }
    }
}
