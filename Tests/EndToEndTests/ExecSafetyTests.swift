import Foundation
import Testing

extension EndToEnd {
    /// exec and fork under the preload library at a high rate: no profiler signal reaches a new
    /// image, no forked child hangs, and the profile of an image that execs is kept under its
    /// own name. Each run is compared with the program's unprofiled run; every run has a time
    /// limit, so a hang fails. More repetitions: Scripts/probes/exec-fork.sh.
    @Suite struct ExecSafety {
        /// Settings of a profiled run at 1 ms with `%p`, in `mode`.
        private static func settings(_ mode: String) -> [String: String] {
            ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"]
        }

        /// The profiles `run` left in `directory` for its pid, by file name.
        private static func profiles(of run: ProfiledRun, in directory: String, prefix: String) throws -> [String: FoldedProfile] {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { $0.hasPrefix("\(prefix)-\(run.process.pid).") && $0.hasSuffix(".folded") }
            return try Dictionary(uniqueKeysWithValues: names.map { ($0, try FoldedProfile(contentsOf: directory + "/" + $0)) })
        }

        @Test("a chain of 10 execs, each after 20 ms of work, survives sampling at 1 ms; each image's profile is kept",
              arguments: ["wall", "cpu"])
        func execChain(mode: String) throws {
            let directory = try ScratchDirectory.make("exec-chain-\(mode)")
            let plain = try ChildProcess.run(try TestProgram.execer.executable(), ["chain", "9"], in: directory)
            #expect(plain.termination == .exited(0), "\(plain)")
            let run = try ProfiledRun.preload(.execer, ["chain", "9"], settings: Self.settings(mode),
                                              profilePath: directory + "/chain-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "a profiler signal outlived an image: \(run.process)")
            let profiles = try Self.profiles(of: run, in: directory, prefix: "chain")
            let images = (1...10).map { "chain-\(run.process.pid).exec\($0).folded" }
            #expect(images.allSatisfy { profiles[$0] != nil }, "one profile per execer image: \(profiles.keys.sorted())")
            // Each image's 20 ms are in its own profile; a wide band, since a busy machine may starve the sampler.
            let sampled = images.filter { (profiles[$0]?.inclusiveCount { $0 == "chain_work" } ?? 0) > 0 }
            #expect(sampled.count >= 5, "images whose own work is in their profile: \(sampled.count) of 10")
            #expect(profiles["chain-\(run.process.pid).folded"] != nil, "/bin/true, the last image, wrote the plain name")
        }

        @Test("rounds of 20 children forked at once, half of which exec, all exit 0 and none hangs")
        func forkRounds() throws {
            let directory = try ScratchDirectory.make("fork-rounds")
            let arguments = ["rounds", "3", "20"]
            let plain = try ChildProcess.run(try TestProgram.execer.executable(), arguments, in: directory)
            #expect(plain.termination == .exited(0) && plain.stdout.contains("children ok"), "\(plain)")
            let run = try ProfiledRun.preload(.execer, arguments, settings: Self.settings("wall"),
                                              profilePath: directory + "/rounds-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout.contains("children ok"), "\(run.process)")
            let children = try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { $0.hasPrefix("rounds-") && $0.hasSuffix(".folded") }
                .map { try FoldedProfile(contentsOf: directory + "/" + $0) }
                .filter { $0.inclusiveCount { $0 == "child_work" } > 0 }
            #expect(children.count >= 10, "forked children profiled themselves: \(children.count) of 60 have child_work (wide band: a busy machine starves their samplers)")
        }

        @Test("20 children forked at once, each exiting at once (exit handlers run), never hang")
        func forkBurst() throws {
            let directory = try ScratchDirectory.make("fork-burst")
            for _ in 0..<5 {
                let run = try ProfiledRun.preload(.execer, ["burst", "20"], settings: Self.settings("wall"),
                                                  profilePath: directory + "/burst-%p.folded", in: directory)
                #expect(run.process.termination == .exited(0), "\(run.process)")
                #expect(run.process.stdout.contains("children ok"), "\(run.process)")
            }
        }

        @Test("a vfork child's exec leaves the parent's session alone, and sampling goes on")
        func vforkExec() throws {
            let directory = try ScratchDirectory.make("vfork-exec")
            let run = try ProfiledRun.preload(.execer, ["vfork", "20"], settings: Self.settings("wall"),
                                              profilePath: directory + "/vfork-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0) && run.process.stdout.contains("children ok"), "\(run.process)")
            let profiles = try Self.profiles(of: run, in: directory, prefix: "vfork")
            #expect(profiles.keys.sorted() == ["vfork-\(run.process.pid).folded"], "no exec of the parent's was seen")
            #expect((profiles["vfork-\(run.process.pid).folded"]?.inclusiveCount { $0 == "after_vforks_work" } ?? 0) > 5)
        }

        @Test("an exec from a second thread, while the main thread runs, survives sampling at 1 ms")
        func execFromThread() throws {
            let directory = try ScratchDirectory.make("thread-exec")
            for _ in 0..<5 {
                let run = try ProfiledRun.preload(.execer, ["thread-exec"], settings: Self.settings("wall"),
                                                  profilePath: directory + "/thread-%p.folded", in: directory)
                #expect(run.process.termination == .exited(0), "\(run.process)")
                // Its profile is written (its 20 ms may get no sample on a busy machine: not checked).
                #expect(FileManager.default.fileExists(atPath: directory + "/thread-\(run.process.pid).exec1.folded"))
            }
        }

        @Test("the profile before an exec is written and the new image, of the same pid, does not overwrite it")
        func preExecProfileKept() throws {
            let directory = try ScratchDirectory.make("exec-handoff")
            let run = try ProfiledRun.preload(.execer, ["handoff"], settings: Self.settings("cpu"),
                                              profilePath: directory + "/handoff-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profiles = try Self.profiles(of: run, in: directory, prefix: "handoff")
            let before = try #require(profiles["handoff-\(run.process.pid).exec1.folded"], "\(profiles.keys.sorted())")
            let after = try #require(profiles["handoff-\(run.process.pid).folded"], "\(profiles.keys.sorted())")
            #expect(before.inclusiveCount { $0 == "before_exec_work" } > 5)
            #expect(before.inclusiveCount { $0 == "after_exec_work" } == 0)
            #expect(after.inclusiveCount { $0 == "after_exec_work" } > 5)
            #expect(after.inclusiveCount { $0 == "before_exec_work" } == 0)
        }

        @Test("without %p the image before the exec writes NAME.exec1 and the last image the plain name")
        func preExecProfileKeptWithoutPercentP() throws {
            let directory = try ScratchDirectory.make("exec-handoff-shared")
            let run = try ProfiledRun.preload(.execer, ["handoff"], settings: Self.settings("cpu"),
                                              profilePath: directory + "/handoff.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let before = try FoldedProfile(contentsOf: directory + "/handoff.exec1.folded")
            #expect(before.inclusiveCount { $0 == "before_exec_work" } > 5)
            #expect(try run.profile().inclusiveCount { $0 == "after_exec_work" } > 5)
        }

        @Test("a failed exec returns ENOENT and sampling goes on after it")
        func failedExec() throws {
            let directory = try ScratchDirectory.make("exec-failed")
            let plain = try ChildProcess.run(try TestProgram.execer.executable(), ["failed"], in: directory)
            #expect(plain.termination == .exited(0) && plain.stdout == "enoent\n", "\(plain)")
            let run = try ProfiledRun.preload(.execer, ["failed"], settings: Self.settings("wall"),
                                              profilePath: directory + "/failed-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout == "enoent\n", "errno intact: \(run.process)")
            let profiles = try Self.profiles(of: run, in: directory, prefix: "failed")
            let final = try #require(profiles["failed-\(run.process.pid).folded"], "\(profiles.keys.sorted())")
            #expect(final.inclusiveCount { $0 == "after_failed_exec" } > 5, "sampled after the failed exec")
            let attempt = try #require(profiles["failed-\(run.process.pid).exec1.folded"], "\(profiles.keys.sorted())")
            #expect(attempt.inclusiveCount { $0 == "before_failed_exec" } > 5, "the part before the attempt is kept")
        }

        @Test("at exec the profiler's pending signals are taken off the queue and the program's own is kept",
              arguments: ["wall", "cpu"])
        func programsPendingSignalKept(mode: String) throws {
            let directory = try ScratchDirectory.make("exec-own-pending-\(mode)")
            let plain = try ChildProcess.run(try TestProgram.execer.executable(), ["own-pending"], in: directory)
            #expect(plain.termination == .exited(0), "\(plain)")
            let run = try ProfiledRun.preload(.execer, ["own-pending"], settings: Self.settings(mode),
                                              profilePath: directory + "/pending-%p.folded", in: directory)
            #expect(run.process.termination == plain.termination, "\(run.process)")
            #expect(run.process.stdout == plain.stdout)
        }

        @Test("a C program sampling itself through the C API at 1 ms (wall) execs itself 10 times while sampling")
        func execDuringCAPISession() throws {
            let directory = try ScratchDirectory.make("c-api-exec")
            let run = try ChildProcess.run(try TestProgram.cAPIExec.executable(), ["10"], in: directory)
            #expect(run.termination == .exited(0), "a profiler signal outlived an image: \(run)")
        }

        @Test("SIGPROF ignored by the program is still ignored in the image it execs")
        func ignoredDispositionSurvivesExec() throws {
            let directory = try ScratchDirectory.make("exec-ignored")
            let plain = try ChildProcess.run(try TestProgram.execer.executable(), ["ignored"], in: directory)
            #expect(plain.termination == .exited(0), "\(plain)")
            let run = try ProfiledRun.preload(.execer, ["ignored"], settings: Self.settings("cpu"),
                                              profilePath: directory + "/ignored-%p.folded", in: directory)
            #expect(run.process.termination == plain.termination, "\(run.process)")
            #expect(run.process.stdout == plain.stdout)
        }
    }
}
