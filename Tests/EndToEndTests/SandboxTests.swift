import Foundation
import Testing

extension EndToEnd {
    /// Where users run it: behind a seccomp filter that refuses perf_event_open (a container
    /// runtime's profile, a perf_event_paranoid of 3) or kills the process that calls it
    /// (systemd's SystemCallFilter=@system-service). The program lives, ends with its own
    /// status, and the profile says what the sandbox withheld.
    @Suite struct Sandboxes {
        /// What a filter does to perf_event_open, and what the summary's engine line then names.
        enum Refusal: String, CaseIterable, CustomTestStringConvertible {
            case kill = "kill", eacces = "EACCES", eperm = "EPERM", enosys = "ENOSYS", enodev = "ENODEV"

            /// The launcher's options for it.
            var launcherOptions: [String] { self == .kill ? ["--kill"] : ["--errno", rawValue] }

            /// The cause the engine line names.
            var cause: String {
                switch self {
                case .kill: "a seccomp filter kills the process that calls it"
                case .eacces: "Permission denied"
                case .eperm: "Operation not permitted"
                case .enosys: "Function not implemented"
                case .enodev: "No such device"
                }
            }

            var testDescription: String { self == .kill ? "killed (SIGSYS)" : rawValue }
        }

        /// `arguments` run by the launcher under `refusal`, the preload library and `settings` set
        /// for `program` alone (the launcher itself runs unprofiled); as root or as an ordinary user.
        static func preloadBehind(_ refusal: Refusal, _ program: TestProgram, _ arguments: [String], settings: [String: String],
                                  setting: RunSetting = .root, in directory: String) throws -> ProfiledRun {
            let output = ProfiledRun.freshProfilePath(for: program, in: directory)
            var environment = settings
            environment["LD_PRELOAD"] = setting == .root ? try BuildProducts.preloadLibrary()
                : try BuildProducts.readableByAll() + "/libStackSamplerPreload.so"
            environment["STACKSAMPLER_OUTPUT"] = output
            setting.prepare(directory)
            let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let launcher = [try TestProgram.denyPerfEvents.executable()] + refusal.launcherOptions
            let (command, _) = try setting.command(launcher + ["/usr/bin/env"] + assignments + [try program.executable()] + arguments,
                                                   environment: [:])
            let process = try ChildProcess.run(command[0], Array(command.dropFirst()), in: directory)
            return ProfiledRun(process: process, profilePath: output)
        }

        /// `stacksampler record OPTIONS` of split, the CLI and the program both behind `refusal`.
        static func recordBehind(_ refusal: Refusal, options: [String], in directory: String) throws -> ProfiledRun {
            let output = ProfiledRun.freshProfilePath(for: .split, in: directory)
            let command = refusal.launcherOptions + [try BuildProducts.cli(), "record"] + options
                + ["-o", output, "--", try TestProgram.split.executable(), "0.4"]
            let process = try ChildProcess.run(try TestProgram.denyPerfEvents.executable(), command, in: directory)
            return ProfiledRun(process: process, profilePath: output)
        }

        /// The summary's engine line.
        static func engineLine(_ stderr: String) -> String {
            stderr.split(separator: "\n").first { $0.hasPrefix("stacksampler: engine: ") }.map(String.init) ?? ""
        }

        @Test("record in every mode and engine: the program lives, and the summary names what was refused",
              arguments: Refusal.allCases)
        func recordInEveryMode(refusal: Refusal) throws {
            let directory = try ScratchDirectory.make("sandbox-record-\(refusal.rawValue)")
            // Wall mode would have opened counters and rings: its engine line says why it did not. cpu
            // mode runs the CPU-time timers unless counters are asked for.
            let modes: [(options: [String], namesRefusal: Bool)] = [
                (["--mode", "wall"], true), (["--mode", "wall", "--period", "1ms"], true), (["--mode", "cpu"], false),
                (["--mode", "cpu", "--period", "1ms"], false), (["--mode", "cpu", "--engine", "timer"], false),
            ]
            for (options, namesRefusal) in modes {
                let run = try Self.recordBehind(refusal, options: options, in: directory)
                #expect(run.process.termination == .exited(0), "\(options): \(run.process)")
                #expect(run.process.stdout.contains("checksum"), "\(options): the program ran to its end: \(run.process)")
                let profile = try run.profile()
                #expect(profile.totalSamples > 20, "\(options): \(run.process.stderr)")
                #expect(profile.inclusiveShare { $0 == "work_fifty" } > 0.15, "\(options): \(run.process.stderr)")
                if namesRefusal {
                    let engine = Self.engineLine(run.process.stderr)
                    #expect(engine.contains("perf_event_open: " + refusal.cause), "\(options): \(engine)")
                }
            }
            // Counters asked for by name: a clear error naming the cause; the program runs unprofiled.
            for options in [["--mode", "cpu", "--engine", "perf"], ["--mode", "cpu", "--event", "page-faults"]] {
                let run = try Self.recordBehind(refusal, options: options, in: directory)
                #expect(run.process.stdout.contains("checksum"), "\(options): the program ran to its end: \(run.process)")
                #expect(run.process.termination != .signaled(SIGSYS), "\(options): \(run.process)")
                let refused = run.process.stderrLines.filter { $0.contains("perf_event_open: " + refusal.cause) }
                #expect(refused.count >= 1 && refused[0].contains("not profiled"), "\(options): \(run.process.stderr)")
            }
        }

        @Test("the preload library in wall mode: the program lives and exits with its own status",
              arguments: Refusal.allCases, [RunSetting.root, .unprivileged])
        func preloadedWallMode(refusal: Refusal, setting: RunSetting) throws {
            let directory = try ScratchDirectory.make("sandbox-preload-\(refusal.rawValue)")
            let settings = ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-"]
            let run = try Self.preloadBehind(refusal, .exitStatus, ["7"], settings: settings, setting: setting, in: directory)
            #expect(run.process.termination == .exited(7), "\(run.process)")
            #expect(Self.engineLine(run.process.stderr).contains("perf_event_open: " + refusal.cause), "\(run.process.stderr)")
            let threads = try Self.preloadBehind(refusal, .threads, ["0.3"], settings: settings, setting: setting, in: directory)
            #expect(threads.process.termination == .exited(0), "\(threads.process)")
            #expect(try threads.profile().inclusiveCount { $0.hasPrefix("worker_") } > 100, "\(threads.process.stderr)")
        }

        /// systemd's `@system-service` set for x86-64, as the comma-separated numbers `allow_only`
        /// takes: its names from `systemd-analyze syscall-filter` (groups expanded), numbered from
        /// <asm/unistd_64.h> (names this kernel's headers lack are left out).
        static func systemServiceCalls(in directory: String) throws -> String {
            var names: Set<String> = [], groups = ["@system-service"], seen: Set<String> = []
            while let group = groups.popLast() {
                guard seen.insert(group).inserted else { continue }
                let listed = try ChildProcess.run("systemd-analyze", ["syscall-filter", group], in: directory)
                guard listed.termination == .exited(0) else { throw HarnessError("systemd-analyze syscall-filter \(group): \(listed)") }
                for line in listed.stdout.split(separator: "\n").dropFirst() {
                    let name = line.trimmingCharacters(in: .whitespaces)
                    if name.isEmpty || name.hasPrefix("#") { continue }
                    if name.hasPrefix("@") { groups.append(name) } else { names.insert(name) }
                }
            }
            let header = try String(contentsOfFile: "/usr/include/x86_64-linux-gnu/asm/unistd_64.h", encoding: .utf8)
            var numbers: [Int] = []
            for line in header.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, fields[0] == "#define", fields[1].hasPrefix("__NR_"), names.contains(String(fields[1].dropFirst(5))),
                      let number = Int(fields[2]) else { continue }
                numbers.append(number)
            }
            guard numbers.count > 200 else { throw HarnessError("only \(numbers.count) calls of @system-service found: \(names.sorted())") }
            return numbers.map(String.init).joined(separator: ",")
        }

        /// The filter of a hardened systemd unit, played: every call outside `@system-service` kills
        /// the process (systemd's default action), so any call of the profiler's outside that set,
        /// and not only perf_event_open, would end the program here.
        @Test("behind systemd's SystemCallFilter=@system-service: record in each mode, the preload in wall mode and a daemon's wall request; the program lives")
        func systemServiceFilter() throws {
            let directory = try ScratchDirectory.make("sandbox-system-service")
            let allowed = try Self.systemServiceCalls(in: directory)
            let launcher = [try TestProgram.allowOnly.executable(), allowed]
            for mode in ["wall", "cpu"] {
                let output = ProfiledRun.freshProfilePath(for: .split, in: directory)
                let run = try ChildProcess.run(launcher[0], [allowed, try BuildProducts.cli(), "record", "--mode", mode, "--period", "1ms",
                                                             "-o", output, "--", try TestProgram.split.executable(), "0.4"], in: directory)
                #expect(run.termination == .exited(0) && run.stdout.contains("checksum"), "\(mode): \(run)")
                #expect(try FoldedProfile(contentsOf: output).inclusiveShare { $0 == "work_fifty" } > 0.15, "\(mode): \(run.stderr)")
            }
            let settings = ["STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-",
                            "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_OUTPUT": directory + "/preloaded.folded"]
            let assignments = settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let preloaded = try ChildProcess.run(launcher[0], [allowed, "/usr/bin/env"] + assignments + [try TestProgram.exitStatus.executable(), "7"],
                                                 in: directory)
            #expect(preloaded.termination == .exited(7), "\(preloaded)")
            #expect(Self.engineLine(preloaded.stderr).contains("perf_event_open: " + Refusal.kill.cause), "\(preloaded.stderr)")
            let service = try HTTPEndpoints.Service.start(in: directory, launcher: launcher)
            let folded = try service.curl([service.base + "/debug/stacksampler/folded?seconds=1&mode=wall"])
            #expect(try FoldedProfile(parsing: folded).inclusiveCount { $0 == "serve_hot" } > 20, "\(folded.prefix(2000))")
            #expect(service.finish() == 3, "the service's own status: \(service.stderr)")
        }

        @Test("a daemon behind a kill filter answers a wall request and the service lives on to its own exit")
        func daemonAnswersWall() throws {
            let directory = try ScratchDirectory.make("sandbox-daemon")
            let service = try HTTPEndpoints.Service.start(in: directory, launcher: [try TestProgram.denyPerfEvents.executable(), "--kill"])
            let folded = try service.curl([service.base + "/debug/stacksampler/folded?seconds=1&mode=wall"])
            let profile = try FoldedProfile(parsing: folded)
            #expect(profile.inclusiveCount { $0 == "serve_hot" } > 20, "\(folded.prefix(2000))")
            #expect(try service.status([service.base + "/debug/stacksampler/wall?seconds=1"]) == 200)
            #expect(service.finish() == 3, "the service's own status: \(service.stderr)")
        }
    }
}
