import Testing

extension EndToEnd {
    /// The profiled program's exit status reaches whoever started it.
    @Suite struct ExitStatus {
        /// `stacksampler record` exits with the command's status.
        @Test("CLI record exits with the command's status")
        func throughCLI() throws {
            let directory = try ScratchDirectory.make("exit-cli")
            let run = try ProfiledRun.record(.exitStatus, ["7"], in: directory)
            #expect(run.process.termination == .exited(7), "\(run.process)")
            #expect(run.wroteProfile, "no profile at \(run.profilePath)")
        }

        /// The preload library leaves the status alone and still writes the profile on exit(7).
        @Test("preload leaves the exit status unchanged")
        func throughPreload() throws {
            let directory = try ScratchDirectory.make("exit-preload")
            let run = try ProfiledRun.preload(.exitStatus, ["7"], in: directory)
            #expect(run.process.termination == .exited(7), "\(run.process)")
            #expect(run.process.stdout.contains("exit_status 7"), "\(run.process)")
            #expect(run.wroteProfile, "no profile at \(run.profilePath) after exit(7)")
        }

        /// The C library ends a process when its last thread ends, and counts the profiler's
        /// threads among them: a program whose main thread called pthread_exit never ended
        /// (profiled in any mode, or with the daemon, it hung until killed, and wrote nothing).
        /// Once the main thread is gone, `/proc/self` shows no memory map: the profile must
        /// still name every frame, and wall mode walk the workers' sleeps. `pool`: a manager's
        /// helpers end while the workers still run, which must not end the process early (a first
        /// version of the check, counting threads rather than knowing them, could).
        @Test("a program whose main thread ends by pthread_exit ends with its last thread, exit 0, its profile whole",
              arguments: ["cpu", "wall", "daemon"], ["workers-last", "main-last", "pool"])
        func mainThreadExitsFirst(mode: String, order: String) throws {
            let directory = try ScratchDirectory.make("main-exits-\(mode)-\(order)")
            let settings = mode == "daemon"
                ? ["STACKSAMPLER_LISTEN": "unix"]
                : ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_PER_THREAD": "1"]
            let run = try ProfiledRun.preload(.mainExitsFirst, [order], settings: settings, in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("workers", in: run.process.stdout) == 3, "\(run.process)")
            guard mode != "daemon" else { return }
            let profile = try run.profile()
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }.joined(separator: "\n")
            let spins = profile.stacks.filter { $0.frames.contains("worker_spin") }
            #expect(spins.reduce(0) { $0 + $1.count } >= 100 && spins.allSatisfy { $0.frames.dropFirst().first == "__clone3" }, "\(stacks)")
            // Every frame of the other threads named and walked. The main thread's pthread_exit
            // unwinds through libgcc_s, which the C library loads at that moment: a sample there
            // may come before the profiler has its tables, and is then marked [no unwind info].
            let mainRoot = " tid=\(run.process.pid)]"
            let others = profile.stacks.filter { !($0.frames.first?.hasSuffix(mainRoot) ?? false) }
            #expect(!others.contains { $0.frames.contains { $0.hasPrefix("[unknown") || $0 == "[no unwind info]" } }, "\(stacks)")
            if mode == "wall" {
                let naps = profile.stacks.filter { $0.frames.contains("worker_nap") }
                #expect(naps.reduce(0) { $0 + $1.count } >= 300, "the workers' 200 ms sleeps, walked:\n\(stacks)")
            }
        }
    }
}
