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

        /// glibc's fork does not reset the loader's write lock (dl_iterate_phdr's): held by another
        /// thread at the fork, it stays held in the child for ever. A child whose session would need
        /// it is not profiled, says so, and runs and exits as it would unprofiled.
        @Test("with %p a child forked while another thread holds the loader's lock never hangs", arguments: ["cpu", "wall"])
        func forkDuringLoaderLock(mode: String) throws {
            let directory = try ScratchDirectory.make("fork-loader-\(mode)")
            let plugin = try TestProgram.plugin.executable()
            let run = try ProfiledRun.preload(.forkLoader, ["40", plugin], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                                              profilePath: directory + "/tree-%p.folded", in: directory)
            let stdout = run.process.stdout
            #expect(ProgramOutput.integer("hung", in: stdout) == 0, "children hung in fork() or exit: \(run.process)")
            #expect(ProgramOutput.integer("failed", in: stdout) == 0, "\(run.process)")
            #expect(ProgramOutput.integer("forked", in: stdout) == 40, "\(run.process)")
            #expect(run.process.termination == .exited(0), "\(run.process)")
            // Each child that exited without exec wrote its profile, or said why it could not.
            let workers = stdout.split(separator: "\n").compactMap { line in line.hasPrefix("worker ") ? String(line.dropFirst(7)) : nil }
            #expect(workers.count == 30, "\(run.process)")
            let profiled = workers.filter { FileManager.default.fileExists(atPath: directory + "/tree-\($0).folded") }
            let refused = workers.filter { run.process.stderr.contains("the loader's lock was held at fork() (dlopen, dlclose or dl_iterate_phdr in another thread); forked process \($0) is not profiled") }
            #expect(profiled.count + refused.count == workers.count, "profiled \(profiled.count), refused \(refused.count) of \(workers.count): \(run.process.stderr)")
            #expect(!profiled.isEmpty, "no child could be profiled: \(run.process.stderr)")
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

        /// `report` reads a tree's process and thread roots back: one process's thread can be
        /// kept, and the roots are written back as they were.
        @Test("report on a --follow-children --per-thread profile keeps one child's thread, its process root kept")
        func reportKeepsAThreadOfTheTree() throws {
            let directory = try ScratchDirectory.make("fork-follow-report")
            let run = try ProfiledRun.record(.forker, [], options: ["--follow-children", "--per-thread"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let stacks = try run.profile().stacks
            let roots = stacks.filter { $0.frames.contains("child_work") }.map { $0.frames.prefix(2).joined(separator: ";") }
            let childRoot = try #require(roots.first, "no child_work stack: \(stacks.prefix(5))")
            #expect(childRoot.hasPrefix("[forker pid=") && childRoot.contains(" tid="), "\(childRoot)")
            let tid = String(childRoot.split(separator: "=").last!.dropLast())
            let output = directory + "/child.folded"
            let report = try ChildProcess.run(try BuildProducts.cli(), ["report", run.profilePath, "--thread", tid, "-o", output], in: directory)
            #expect(report.termination == .exited(0), "\(report)")
            let kept = try FoldedProfile(contentsOf: output)
            #expect(!kept.stacks.isEmpty && kept.stacks.allSatisfy { $0.frames.prefix(2).joined(separator: ";") == childRoot },
                    "\(kept.stacks.prefix(5))")
            #expect(kept.stacks.contains { $0.frames.contains("child_work") })
        }

        @Test("record --follow-children: a child forked while another thread holds the loader's lock never hangs")
        func followChildrenDuringLoaderLock() throws {
            let directory = try ScratchDirectory.make("fork-loader-follow")
            let plugin = try TestProgram.plugin.executable()
            let run = try ProfiledRun.record(.forkLoader, ["24", plugin], options: ["--follow-children", "--period", "1ms"], in: directory)
            #expect(ProgramOutput.integer("hung", in: run.process.stdout) == 0, "children hung in fork() or exit: \(run.process)")
            #expect(ProgramOutput.integer("failed", in: run.process.stdout) == 0, "\(run.process)")
            #expect(ProgramOutput.integer("forked", in: run.process.stdout) == 24, "\(run.process)")
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stderr.contains("merged the profiles of"), "\(run.process.stderr)")
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
