import Foundation
import Testing

/// Real multi-process services (Debian's nginx and redis-server, Scripts/setup.sh) run under the
/// preload library with a daemon setting, and what the suite needs to start, watch and always stop them.
enum ForkingService {
    static let nginx = "/usr/sbin/nginx"
    static let redis = "/usr/bin/redis-server"
    static let ab = "/usr/bin/ab"
    static var hasNginx: Bool { FileManager.default.isExecutableFile(atPath: nginx) && FileManager.default.isExecutableFile(atPath: ab) }
    static var hasRedis: Bool { FileManager.default.isExecutableFile(atPath: redis) && GoPprof.executable != nil }
    static let python = "/usr/bin/python3"
    static var hasPython: Bool { FileManager.default.isExecutableFile(atPath: python) }
    /// Why the tests that need them are skipped.
    static let nginxSkipReason: Comment = "nginx or ab is not installed (Scripts/setup.sh installs nginx and apache2-utils)"
    static let redisSkipReason: Comment = "redis-server or go is not installed (Scripts/setup.sh installs redis-server and golang-go)"
    static let pythonSkipReason: Comment = "python3 is not installed (Scripts/setup.sh installs it)"

    /// Two distinct free loopback ports.
    static func twoPorts() throws -> (UInt16, UInt16) {
        let first = try EndToEnd.HTTPEndpoints.freePort()
        for _ in 0..<20 {
            let second = try EndToEnd.HTTPEndpoints.freePort()
            if second != first { return (first, second) }
        }
        throw HarnessError("no second free port")
    }

    /// An nginx configuration in `directory`: `workers` workers, loopback `port`, pid file,
    /// error log and temporary paths all inside `directory`. Returns its path.
    static func nginxConfiguration(in directory: String, port: UInt16, daemon: Bool) throws -> String {
        let path = directory + "/nginx.conf"
        let text = """
            daemon \(daemon ? "on" : "off");
            master_process on;
            \(getuid() == 0 ? "user root;" : "")
            worker_processes 2;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(directory)/body;
                proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi;
                uwsgi_temp_path \(directory)/uwsgi;
                scgi_temp_path \(directory)/scgi;
                server { listen 127.0.0.1:\(port); location / { return 200 "hello\\n"; } }
            }

            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// nginx's arguments for `configuration` (prefix and early error log in its directory).
    static func nginxArguments(_ configuration: String, _ extra: [String] = []) -> [String] {
        let directory = (configuration as NSString).deletingLastPathComponent
        return ["-p", directory, "-c", configuration, "-e", directory + "/error.log"] + extra
    }

    /// Waits (at most `seconds`) for `condition`; whether it came true.
    static func waitFor(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < end else { return false }
            usleep(20_000)
        }
        return true
    }

    /// The pid in `file`, once it is there (at most 10 s).
    static func pid(inFile file: String) throws -> pid_t {
        var pid: pid_t?
        _ = waitFor { pid = (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }; return pid != nil }
        guard let pid else { throw HarnessError("no pid in \(file) after 10 s") }
        return pid
    }

    /// The children of `pid`, from /proc.
    static func children(of pid: pid_t) -> [pid_t] {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return text.split(separator: " ").compactMap { pid_t($0) }.sorted()
    }

    /// Whether `pid` runs (not gone, not a zombie).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// Kills `pid` and its children (SIGKILL), for the end of a test whatever happened.
    static func killTree(_ pid: pid_t?) {
        guard let pid, pid > 1 else { return }
        for child in children(of: pid) { kill(child, SIGKILL) }
        kill(pid, SIGKILL)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func isListening(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// The pid the daemon at 127.0.0.1:`port` says it runs in (its status), or nil.
    static func daemonPID(port: UInt16, in directory: String) -> Int? {
        guard let result = try? ChildProcess.run("curl", ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/debug/stacksampler/status"],
                                                 in: directory, timeout: .seconds(10)),
              result.termination == .exited(0),
              let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else { return nil }
        return (object["pid"] as? NSNumber)?.intValue
    }

    /// `ab` against 127.0.0.1:`port` for about `seconds`, in the background.
    static func load(port: UInt16, seconds: Int, in directory: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ab)
        process.arguments = ["-q", "-t", String(seconds), "-n", "10000000", "-c", "4", "http://127.0.0.1:\(port)/"]
        process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        try process.run()
        return process
    }
}

extension EndToEnd {
    /// Services that fork (daemonize, or run pre-forked workers) under a daemon setting: the listen
    /// address is served by the process that lives, every worker is profiled and served on its own
    /// socket, and `stacksampler profile PID` tells the truth about each process.
    @Suite struct ForkingServices {
        @Test("nginx in its default (daemonizing) mode, two workers, STACKSAMPLER_LISTEN: the address is answered by the master that lives, each worker's profile under ab load names nginx's worker functions; stopped cleanly",
              .enabled(if: ForkingService.hasNginx, ForkingService.nginxSkipReason))
        func daemonizingNginx() throws {
            let directory = try ScratchDirectory.make("nginx-daemon")
            let (httpPort, listenPort) = try ForkingService.twoPorts()
            let configuration = try ForkingService.nginxConfiguration(in: directory, port: httpPort, daemon: true)
            var started: pid_t?
            defer { ForkingService.killTree(started) }
            let run = try ChildProcess.run(ForkingService.nginx, ForkingService.nginxArguments(configuration),
                                               environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(),
                                                             "STACKSAMPLER_LISTEN": "127.0.0.1:\(listenPort)"],
                                               in: directory, timeout: .seconds(30))
            #expect(run.termination == .exited(0), "\(run)")
            let master = try ForkingService.pid(inFile: directory + "/nginx.pid")
            started = master
            var workers: [pid_t] = []
            #expect(ForkingService.waitFor { workers = ForkingService.children(of: master); return workers.count == 2 }, "workers: \(workers)")

            // The process that bound the address exited; the one that lives answers it (before: the
            // exited parent's socket, inherited by all three processes, answered nobody: curl timed out).
            var served: Int?
            #expect(ForkingService.waitFor { served = ForkingService.daemonPID(port: listenPort, in: directory); return served != nil },
                    "nothing answers 127.0.0.1:\(listenPort)")
            #expect(served == Int(master))

            // Each worker, on its own socket, under load.
            let load = try ForkingService.load(port: httpPort, seconds: 6, in: directory)
            defer {
                if load.isRunning { load.terminate() }
                load.waitUntilExit()
            }
            // In wall mode every worker's profile has its event loop (whatever share of the load it
            // got); in cpu mode the requests' work shows (nginx spreads connections over both). A
            // worker's first on-demand session attaches its threads at the sampler's scans: in a full
            // suite on 2 cores one 1 s wall profile once came back empty (the sampler starved), so a
            // worker is asked up to 3 times for a profile with its event loop.
            var union = ""
            for worker in workers {
                for mode in ["wall", "cpu"] {
                    var folded = "", results: [ProcessResult] = []
                    for attempt in 1...(mode == "wall" ? 3 : 1) where !folded.contains("ngx_process_events_and_timers") {
                        let output = directory + "/worker-\(worker)-\(mode)-\(attempt).folded"
                        let result = try ChildProcess.run(try BuildProducts.cli(),
                                                          ["profile", String(worker), "--seconds", "1", "--mode", mode, "-o", output],
                                                          in: directory, timeout: .seconds(60))
                        #expect(result.termination == .exited(0), "\(result)")
                        results.append(result)
                        folded = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                    }
                    if mode == "wall" {
                        #expect(folded.contains("ngx_process_events_and_timers"), "worker \(worker): \(folded.prefix(2000)) \(results)")
                    }
                    union += folded
                }
            }
            #expect(union.contains("ngx_http_"), "\(union.prefix(4000))")

            // Stopped cleanly: every process gone, the address and the sockets released.
            let stop = try ChildProcess.run(ForkingService.nginx, ForkingService.nginxArguments(configuration, ["-s", "stop"]), in: directory)
            #expect(stop.termination == .exited(0), "\(stop)")
            #expect(ForkingService.waitFor { ([master] + workers).allSatisfy { !ForkingService.isRunning($0) } })
            #expect(!ForkingService.isListening(listenPort))
            for pid in [master] + workers {
                #expect(!FileManager.default.fileExists(atPath: "/tmp/stacksampler-\(getuid())/\(pid).sock"), "socket of \(pid) left")
            }
        }

        /// What a service is started behind, all of it under the same settings: nothing; `timeout`,
        /// which forks, execs the service in the child and waits; a shell script that does the same.
        enum Wrapper: String, CaseIterable, CustomTestStringConvertible {
            case none, timeout, shellScript = "shell script"

            /// The command line of `command` behind the wrapper.
            func command(_ command: [String]) -> [String] {
                switch self {
                case .none: command
                case .timeout: ["/usr/bin/timeout", "60"] + command
                case .shellScript: ["/bin/sh", "-c", "\"$0\" \"$@\"; status=$?; exit $status"] + command
                }
            }

            var testDescription: String { self == .none ? "started directly" : "behind a \(rawValue)" }
        }

        /// The listen address goes to the service, not to the wrapper that started it: the
        /// wrapper binds it first (it is preloaded too), gives it up when the service it started asks
        /// (`ListenRelease`), and redis's daemonized child takes it once redis's first process exits.
        @Test("redis-server --daemonize yes with STACKSAMPLER_LISTEN is answered by go tool pprof",
              .enabled(if: ForkingService.hasRedis, ForkingService.redisSkipReason), arguments: Wrapper.allCases)
        func daemonizingRedis(wrapper: Wrapper) throws {
            let directory = try ScratchDirectory.make("redis-daemon")
            let (redisPort, listenPort) = try ForkingService.twoPorts()
            var server: pid_t?
            defer { ForkingService.killTree(server) }
            let command = wrapper.command([ForkingService.redis, "--daemonize", "yes", "--port", String(redisPort), "--bind", "127.0.0.1",
                                           "--save", "", "--appendonly", "no", "--dir", directory, "--pidfile", directory + "/redis.pid",
                                           "--logfile", directory + "/redis.log"])
            let started = try ChildProcess.run(command[0], Array(command.dropFirst()),
                                               environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(),
                                                             "STACKSAMPLER_LISTEN": "127.0.0.1:\(listenPort)"],
                                               in: directory, timeout: .seconds(30))
            #expect(started.termination == .exited(0), "\(started)")
            server = try ForkingService.pid(inFile: directory + "/redis.pid")
            #expect(ForkingService.waitFor { ForkingService.daemonPID(port: listenPort, in: directory) == Int(server!) },
                    "127.0.0.1:\(listenPort) is not answered by redis-server \(server!): \(started)")
            // Before: "timeout awaiting response headers".
            let pprof = try ChildProcess.run(GoPprof.executable!, ["tool", "pprof", "-raw", "http://127.0.0.1:\(listenPort)/debug/stacksampler/wall?seconds=1"],
                                             environment: ["HOME": directory, "PPROF_TMPDIR": directory], in: directory, timeout: .seconds(120))
            #expect(pprof.termination == .exited(0), "\(pprof)")
            #expect(pprof.stdout.contains("wall/nanoseconds"), "\(pprof)")
            #expect(pprof.stdout.contains("/redis-server"), "\(pprof)")
            #expect(pprof.stdout.contains("aeMain"), "\(pprof)")
        }

        /// The other side of the wrapper rule: a process that has worked (its main thread's CPU past
        /// the wrapper bound) and then runs a program and waits for it keeps its address, and the
        /// program stays idle, as every program a profiled service starts does.
        @Test("a shell that works, then runs a program and waits for it, keeps its address; the program stays idle")
        func workingOwnerKeepsAddress() throws {
            let directory = try ScratchDirectory.make("working-owner")
            let listenPort = try HTTPEndpoints.freePort()
            let stderrPath = directory + "/owner.stderr"
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done; /bin/sleep 2; exit 0"]
            var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
            environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
            environment["STACKSAMPLER_LISTEN"] = "127.0.0.1:\(listenPort)"
            process.environment = environment
            process.standardError = FileHandle(forWritingAtPath: stderrPath)
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            defer { if process.isRunning { process.terminate() } }
            let stderr = { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }
            #expect(ForkingService.waitFor(seconds: 30) { stderr().contains("not profiling it") }, "the program was not refused: \(stderr())")
            #expect(ForkingService.daemonPID(port: listenPort, in: directory) == Int(process.processIdentifier), "\(stderr())")
            #expect(!stderr().contains("goes to it"), "\(stderr())")
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }

        @Test("nginx with daemon off, %p outputs and STACKSAMPLER_LISTEN: each worker's profile is written and served; the address is the master's",
              .enabled(if: ForkingService.hasNginx, ForkingService.nginxSkipReason))
        func preforkedNginxWorkers() throws {
            let directory = try ScratchDirectory.make("nginx-workers")
            let (httpPort, listenPort) = try ForkingService.twoPorts()
            let configuration = try ForkingService.nginxConfiguration(in: directory, port: httpPort, daemon: false)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ForkingService.nginx)
            process.arguments = ForkingService.nginxArguments(configuration)
            var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
            environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
            environment["STACKSAMPLER_LISTEN"] = "127.0.0.1:\(listenPort)"
            environment["STACKSAMPLER_OUTPUT"] = directory + "/profile-%p.folded"
            environment["STACKSAMPLER_MODE"] = "wall"
            process.environment = environment
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            let master = process.processIdentifier
            defer {
                ForkingService.killTree(master)
                process.waitUntilExit()
            }
            var workers: [pid_t] = []
            #expect(ForkingService.waitFor { workers = ForkingService.children(of: master); return workers.count == 2 }, "workers: \(workers)")
            #expect(ForkingService.waitFor { ForkingService.daemonPID(port: listenPort, in: directory) == Int(master) })

            // `profile PID` reaches each worker's own daemon (before: "was not started with the
            // StackSampler preload library", nginx having overwritten its environment with its title).
            for worker in workers {
                let output = directory + "/served-\(worker).folded"
                let result = try ChildProcess.run(try BuildProducts.cli(), ["profile", String(worker), "--seconds", "1", "--mode", "wall", "-o", output],
                                                  in: directory, timeout: .seconds(60))
                #expect(result.termination == .exited(0), "\(result)")
                #expect(((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("ngx_process_events_and_timers"), "\(worker)")
            }

            // Each worker writes its own profile at exit (before: only the master's).
            let quit = try ChildProcess.run(ForkingService.nginx, ForkingService.nginxArguments(configuration, ["-s", "quit"]), in: directory)
            #expect(quit.termination == .exited(0), "\(quit)")
            #expect(ForkingService.waitFor(seconds: 20) { !process.isRunning })
            for pid in [master] + workers {
                #expect(FileManager.default.fileExists(atPath: directory + "/profile-\(pid).folded"), "no profile of \(pid)")
            }
            for worker in workers {
                let folded = (try? String(contentsOfFile: directory + "/profile-\(worker).folded", encoding: .utf8)) ?? ""
                #expect(folded.contains("ngx_process_events_and_timers"), "worker \(worker): \(folded.prefix(2000))")
            }
        }

        @Test("a daemon process forking children: those forked while a profile is taken say they are not profiled, those forked after run their own daemon")
        func forksAroundAProfile() throws {
            let directory = try ScratchDirectory.make("fork-rounds")
            let after = directory + "/after", stdoutPath = directory + "/stdout", stderrPath = directory + "/stderr"
            for path in [stdoutPath, stderrPath] { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try TestProgram.forkRounds.executable())
            process.arguments = [after]
            var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
            environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
            environment["STACKSAMPLER_LISTEN"] = "unix"
            process.environment = environment
            process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
            process.standardError = FileHandle(forWritingAtPath: stderrPath)
            try process.run()
            defer {
                _ = FileManager.default.createFile(atPath: after, contents: nil)
                process.waitUntilExit()
            }
            let socket = "/tmp/stacksampler-\(getuid())/\(process.processIdentifier).sock"
            #expect(ForkingService.waitFor { FileManager.default.fileExists(atPath: socket) }, "no \(socket)")
            let profile = try ChildProcess.run(try BuildProducts.cli(), ["profile", String(process.processIdentifier), "--seconds", "1", "--mode", "wall",
                                                                         "-o", directory + "/x.folded"], in: directory, timeout: .seconds(60))
            #expect(profile.termination == .exited(0), "\(profile)")
            _ = FileManager.default.createFile(atPath: after, contents: nil)
            #expect(ForkingService.waitFor(seconds: 30) { !process.isRunning })
            #expect(process.terminationStatus == 0)
            let stdout = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
            // Forked during the request: said, not silently skipped (a thread of the parent's ran
            // the server's code at the fork). After it: a daemon of their own (before, the request's
            // session had taken the preload library's fork hooks away for good).
            #expect(stderr.contains("was answering a request at the fork"), "\(stderr)")
            for number in 1...3 { #expect(stdout.contains("after \(number) daemon yes"), "\(stdout)\n\(stderr)") }
        }

        @Test("a Python os.fork() child, with %p outputs and STACKSAMPLER_LISTEN, writes a profile of its own",
              .enabled(if: ForkingService.hasPython, ForkingService.pythonSkipReason))
        func pythonForkChild() throws {
            let directory = try ScratchDirectory.make("python-fork")
            let script = directory + "/fork.py"
            try """
                import os
                def child_spin(n):
                    total = 0
                    for i in range(n): total += i
                    return total
                pid = os.fork()
                if pid == 0:
                    child_spin(2000000)
                    raise SystemExit(0)
                os.waitpid(pid, 0)
                print("child", pid)

                """.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try ChildProcess.run(ForkingService.python, ["-I", "-S", script],
                                              environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_LISTEN": "unix",
                                                            "STACKSAMPLER_OUTPUT": directory + "/profile-%p.folded"],
                                              in: directory, timeout: .seconds(60))
            #expect(result.termination == .exited(0), "\(result)")
            let child = try #require(result.stdout.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }, "\(result)")
            // Before: only the parent's profile (the daemon setting left forked children idle).
            let folded = (try? String(contentsOfFile: directory + "/profile-\(child).folded", encoding: .utf8)) ?? ""
            #expect(folded.contains("_PyEval_EvalFrameDefault"), "child \(child): \(folded.prefix(1000))\n\(result)")
            #expect(FileManager.default.fileExists(atPath: directory + "/profile-\(result.pid).folded"))
        }

        @Test("profile PID tells a process without the preload library from a preloaded one without a daemon")
        func profileSaysTheTruth() throws {
            let directory = try ScratchDirectory.make("profile-truth")
            let stopFile = directory + "/stop"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try TestProgram.service.executable())
            process.arguments = [stopFile, "60", directory + "/pid"]
            var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
            environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
            environment["STACKSAMPLER_OUTPUT"] = directory + "/out.folded"
            process.environment = environment
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            defer {
                _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
                process.waitUntilExit()
            }
            _ = try ForkingService.pid(inFile: directory + "/pid")
            let result = try ChildProcess.run(try BuildProducts.cli(), ["profile", String(process.processIdentifier), "--seconds", "1", "-o", directory + "/x.folded"],
                                              in: directory, timeout: .seconds(30))
            #expect(result.termination == .exited(1), "\(result)")
            #expect(result.stderr.contains("has the StackSampler preload library loaded but no daemon socket"), "\(result)")
            #expect(!result.stderr.contains("not started with"), "\(result)")
        }
    }
}
