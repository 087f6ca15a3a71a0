import Foundation
import Testing

extension EndToEnd {
    /// Every way libc offers to set a signal's action behaves as without the profiler: for the
    /// signals the engine handles it reaches the program's remembered action with libc's exact
    /// flags and masks, and any other signal is left to libc. Each program runs three times,
    /// unprofiled, with the preload library idle, and profiled; the outputs must agree.
    @Suite struct SignalDispositions {
        /// The program run unprofiled, with the preload library idle (no output set), and profiled with `settings`.
        struct ThreeRuns {
            let plain: ProcessResult
            let idle: ProcessResult
            let profiled: ProfiledRun
        }

        static func runThreeWays(
            _ program: TestProgram, _ arguments: [String], settings: [String: String], label: String
        ) throws -> ThreeRuns {
            let directory = try ScratchDirectory.make(label)
            let executable = try program.executable()
            let plain = try ChildProcess.run(executable, arguments, in: directory)
            let idle = try ChildProcess.run(
                executable, arguments, environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary()], in: directory)
            let profiled = try ProfiledRun.preload(program, arguments, settings: settings, in: directory)
            return ThreeRuns(plain: plain, idle: idle, profiled: profiled)
        }

        /// sigset, bsd_signal, ssignal, sysv_signal, sigignore and __sigaction go around an
        /// interposed sigaction inside libc. With no timer of its own, the program's SIGPROF
        /// handler must be called 0 times by the profiler's signals, and once by its own raise();
        /// sysv_signal's one-shot reset, sigset's SIG_HOLD and each way's flags and mask must be
        /// what libc gives; and sampling must go on.
        @Test("a SIGPROF action set any way behaves as without the profiler, and sampling goes on",
              arguments: ["signal", "bsd_signal", "ssignal", "sysv_signal", "__sysv_signal", "sigset", "sigignore", "__sigaction"])
        func dispositionSetter(way: String) throws {
            let runs = try Self.runThreeWays(
                .dispositionSetters, [way], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms"],
                label: "setter-\(way)")
            #expect(runs.plain.termination == .exited(0), "\(runs.plain)")
            #expect(runs.plain.stdout.contains("calls_during_spin 0"), "\(runs.plain)")
            for run in [runs.idle, runs.profiled.process] {
                #expect(run.termination == runs.plain.termination, "\(run)")
                #expect(run.stdout == runs.plain.stdout, "unprofiled:\n\(runs.plain.stdout)\nwith the library:\n\(run.stdout)")
            }
            #expect(try runs.profiled.profile().totalSamples > 0, "sampling stopped: \(runs.profiled.process)")
        }

        /// siginterrupt(SIGALRM, 1) then signal(SIGALRM, h): alarm(1) interrupts a read of an
        /// empty pipe with EINTR. A signal() that forced SA_RESTART would block it for good (the
        /// program's watchdog then ends it with status 5).
        @Test("siginterrupt is honoured by signal() for signals that are not the profiler's", arguments: ["cpu", "wall"])
        func siginterruptHonoured(mode: String) throws {
            let runs = try Self.runThreeWays(
                .signalRaces, ["interrupt"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                label: "siginterrupt-\(mode)")
            #expect(runs.plain.stdout.contains("read EINTR"), "\(runs.plain)")
            for run in [runs.idle, runs.profiled.process] {
                #expect(run.termination == .exited(0), "status 5: the read was restarted and never returned. \(run)")
                #expect(run.stdout == runs.plain.stdout, "\(run)")
            }
        }

        /// The program's SIGPROF handler, set with sigaction and no SA_RESTART, must interrupt a
        /// read of an empty pipe with EINTR although the profiler's handler is the one installed
        /// (the kernel restarts by the installed action's flags).
        @Test("the program's SA_RESTART choice holds for the profiler's own signal", arguments: ["cpu", "wall"])
        func noRestartOnProfilersSignal(mode: String) throws {
            let runs = try Self.runThreeWays(
                .signalRaces, ["interrupt-sigprof"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                label: "no-restart-sigprof-\(mode)")
            #expect(runs.plain.stdout.contains("read EINTR"), "\(runs.plain)")
            for run in [runs.idle, runs.profiled.process] {
                #expect(run.termination == .exited(0), "status 5: the read was restarted and never returned. \(run)")
                #expect(run.stdout == runs.plain.stdout, "\(run)")
            }
        }

        /// sigaction(SIGSEGV, <unmapped>, NULL) faults while libc reads the action and dies of
        /// SIGSEGV. The profiler handles SIGSEGV: it must read the action before it locks
        /// anything, or its own fault handler waits for that lock forever.
        @Test("sigaction with a bad pointer for a profiler's signal dies of SIGSEGV as without it")
        func badActionPointer() throws {
            let runs = try Self.runThreeWays(
                .signalRaces, ["bad-pointer"], settings: ["STACKSAMPLER_MODE": "cpu"], label: "sigaction-bad-pointer")
            #expect(runs.plain.termination == .signaled(SIGSEGV), "\(runs.plain)")
            for run in [runs.idle, runs.profiled.process] {
                #expect(run.termination == runs.plain.termination, "status 5: a handler spun waiting for the writer. \(run)")
            }
        }

        /// The program's SIGPROF handler, fed by its own ITIMER_PROF, runs while the same thread
        /// and another keep setting it with sigaction: a handler that met a write half-done on
        /// its own thread would wait forever (the watchdog then exits with status 5).
        @Test("the program's handler runs while sigaction writes its action, on its thread and another",
              arguments: ["cpu", "wall"])
        func handlerDuringWrites(mode: String) throws {
            let runs = try Self.runThreeWays(
                .signalRaces, ["writers", "0.3"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"],
                label: "sigaction-writers-\(mode)")
            for run in [runs.plain, runs.idle, runs.profiled.process] {
                #expect(run.termination == .exited(0), "\(run)")
                #expect((ProgramOutput.integer("ticks", in: run.stdout) ?? 0) > 0, "\(run)")
            }
            #expect(try runs.profiled.profile().totalSamples > 0, "\(runs.profiled.process)")
        }

        /// SIGSEGV sent with tgkill (si_code SI_TKILL) is the program's even when it lands while a
        /// sample unwinds (a 5000-frame stack, 4096 frames kept, every millisecond): each one must
        /// reach the program's handler, and none may be taken for a fault of the unwinder.
        @Test("a SIGSEGV sent during an unwind goes to the program, not to the fault guard")
        func sentSegvDuringUnwind() throws {
            let runs = try Self.runThreeWays(
                .signalRaces, ["user-segv", "1"],
                settings: ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_MAX_DEPTH": "4096",
                           "STACKSAMPLER_SUMMARY": "-"],
                label: "sent-segv")
            for run in [runs.plain, runs.idle, runs.profiled.process] {
                #expect(run.termination == .exited(0), "exit 3: a SIGSEGV never reached the program. \(run)")
                #expect(ProgramOutput.integer("lost", in: run.stdout) == 0, "\(run)")
            }
            #expect(runs.profiled.process.stderr.contains(" 0 unwind faults"), "\(runs.profiled.process.stderr)")
            #expect(try runs.profiled.profile().totalSamples > 0, "\(runs.profiled.process)")
        }
    }
}
