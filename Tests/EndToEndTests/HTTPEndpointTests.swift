import Foundation
import Testing

extension EndToEnd {
    /// The HTTP pull endpoints in a running service started with the preload library and
    /// `STACKSAMPLER_LISTEN`, fetched with real clients: `go tool pprof` over TCP, curl over the
    /// default unix socket. The service runs on, and exits with its own status at the end.
    @Suite struct HTTPEndpoints {
        /// A running `service` under the preload library, listening on 127.0.0.1:`port`.
        struct Service {
            let process: Process
            let directory: String
            let port: UInt16
            let pid: pid_t
            /// The service's user.
            let uid: uid_t
            let stopFile: String
            let stderrPath: String
            var socketPath: String { "/tmp/stacksampler-\(uid)/\(pid).sock" }
            var base: String { "http://127.0.0.1:\(port)" }

            /// Starts the service in `setting`; with a `launcher` (a command and its options, such
            /// as a seccomp filter's) after the setting's own, the launchers run unprofiled and exec
            /// the service (same pid) with the profiler's settings.
            static func start(in directory: String, launcher: [String] = [], setting: RunSetting = .root) throws -> Service {
                setting.prepare(directory)
                let launcher = try setting.launcher() + launcher
                let port = try freePort()
                let stopFile = directory + "/stop"
                let pidFile = directory + "/pid"
                let stderrPath = directory + "/service.stderr"
                _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
                let process = Process()
                let settings = ["LD_PRELOAD": try setting.preloadLibrary(), "STACKSAMPLER_LISTEN": "127.0.0.1:\(port)",
                                "STACKSAMPLER_MAX_REQUEST_SECONDS": "10"]
                var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
                let command = [try TestProgram.service.executable(), stopFile, "120", pidFile]
                if let first = launcher.first {
                    process.executableURL = URL(fileURLWithPath: first)
                    process.arguments = launcher.dropFirst() + ["/usr/bin/env"] + settings.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                        + command
                } else {
                    process.executableURL = URL(fileURLWithPath: command[0])
                    process.arguments = Array(command.dropFirst())
                    environment.merge(settings) { $1 }
                }
                process.environment = environment
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle(forWritingAtPath: stderrPath)
                try process.run()
                let pid = process.processIdentifier
                let uid = setting == .root ? getuid() : uid_t(RunSetting.user)!
                let socket = "/tmp/stacksampler-\(uid)/\(pid).sock"
                let started = Date()
                while !FileManager.default.fileExists(atPath: socket) || !FileManager.default.fileExists(atPath: pidFile) {
                    guard process.isRunning, Date().timeIntervalSince(started) < 30 else {
                        process.terminate()
                        throw HarnessError("the service never listened: \((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "")")
                    }
                    usleep(20_000)
                }
                return Service(process: process, directory: directory, port: port, pid: pid, uid: uid, stopFile: stopFile, stderrPath: stderrPath)
            }

            /// Asks the service to end and waits: its exit status.
            func finish() -> Int32 {
                _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
                process.waitUntilExit()
                return process.terminationStatus
            }

            var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

            /// `curl` with `arguments`: its standard output.
            func curl(_ arguments: [String]) throws -> String {
                let result = try ChildProcess.run("curl", ["-sS", "--max-time", "60"] + arguments, in: directory, timeout: .seconds(90))
                guard result.termination == .exited(0) else { throw HarnessError("curl \(arguments) failed: \(result)") }
                return result.stdout
            }

            /// The status code of a request made with `arguments` (a URL and options).
            func status(_ arguments: [String]) throws -> Int {
                Int(try curl(["-o", "/dev/null", "-w", "%{http_code}"] + arguments)) ?? 0
            }
        }

        /// The daemon where users run it: as root, as an ordinary user, and with perf_event_open
        /// refused (a container's profile). A wall request over TCP and a cpu request over the
        /// user's default socket each name the hot function, and the service exits with its own
        /// status.
        @Test("wall and cpu requests name the hot function in every setting; the service exits 3", arguments: RunSetting.allCases)
        func requestsInEverySetting(setting: RunSetting) throws {
            let directory = try ScratchDirectory.make("http-\(setting.rawValue.split(separator: " ").first!)")
            let service = try Service.start(in: directory, setting: setting)
            var finished = false
            defer { if !finished { _ = service.finish() } }
            let wall = try service.curl(["\(service.base)/debug/stacksampler/folded?seconds=1&mode=wall"])
            #expect(wall.contains("serve_hot"), "\(setting): \(wall.prefix(500))")
            let cpu = try service.curl(["--unix-socket", service.socketPath, "http://x/debug/stacksampler/folded?seconds=1"])
            #expect(cpu.contains("serve_hot"), "\(setting): \(cpu.prefix(500))")
            finished = true
            #expect(service.finish() == 3, "\(setting): \(service.stderr)")
        }

        /// A TCP port nothing listens on now (the kernel's choice for port 0).
        static func freePort() throws -> UInt16 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard ok else { throw HarnessError("no free port") }
            return UInt16(bigEndian: address.sin_port)
        }

        @Test("go tool pprof over TCP and curl over the default socket name the hot function; errors; modes; the service exits 3")
        func endpoints() throws {
            let directory = try ScratchDirectory.make("http")
            let service = try Service.start(in: directory)
            var finished = false
            defer { if !finished { _ = service.finish() } }

            // The default socket: 0600 in a 0700 directory of this user.
            let socketInfo = try FileManager.default.attributesOfItem(atPath: service.socketPath)
            #expect((socketInfo[.posixPermissions] as? Int) == 0o600)
            #expect((socketInfo[.type] as? FileAttributeType) == .typeSocket)
            let directoryInfo = try FileManager.default.attributesOfItem(atPath: "/tmp/stacksampler-\(getuid())")
            #expect((directoryInfo[.posixPermissions] as? Int) == 0o700)

            // Go's client, over TCP.
            if let go = GoPprof.executable {
                let result = try ChildProcess.run(go, ["tool", "pprof", "-top", "\(service.base)/debug/pprof/profile?seconds=2"],
                                                  environment: ["HOME": directory, "PPROF_TMPDIR": directory], in: directory, timeout: .seconds(120))
                #expect(result.termination == .exited(0), "\(result)")
                #expect(result.stdout.contains("serve_hot"), "\(result)")
                #expect(result.stdout.contains("Type: cpu"), "\(result)")
            }

            // A flame graph over the default unix socket.
            let svg = try service.curl(["--unix-socket", service.socketPath, "http://x/debug/stacksampler/flamegraph.svg?seconds=1"])
            #expect(svg.contains("<svg"), "\(svg.prefix(200))")
            #expect(svg.contains("serve_hot"))
            let headers = try service.curl(["-D", "-", "-o", "/dev/null", "--unix-socket", service.socketPath,
                                            "http://x/debug/stacksampler/folded?seconds=1&mode=wall"])
            #expect(headers.lowercased().contains("content-type: text/plain"), "\(headers)")
            let pprofHeaders = try service.curl(["-D", "-", "-o", "/dev/null", "\(service.base)/debug/stacksampler/wall?seconds=1"])
            #expect(pprofHeaders.contains("Content-Disposition: attachment; filename=\"wall\""), "\(pprofHeaders)")
            #expect(pprofHeaders.contains("Content-Type: application/octet-stream"), "\(pprofHeaders)")

            // Errors, with real requests.
            #expect(try service.status(["\(service.base)/debug/pprof/profile?seconds=abc"]) == 400)
            #expect(try service.status(["\(service.base)/debug/pprof/profile?seconds=11"]) == 400)
            #expect(try service.curl(["\(service.base)/debug/pprof/profile?seconds=0"]).hasPrefix("bad seconds: "))
            #expect(try service.status(["\(service.base)/debug/pprof/heap"]) == 404)
            #expect(try service.status(["-X", "POST", "\(service.base)/debug/pprof/profile"]) == 405)
            #expect(try service.status(["\(service.base)/debug/pprof/"]) == 200)

            // One profile at a time: a second request meanwhile gets 429 with Retry-After.
            let long = Process()
            long.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            long.arguments = ["curl", "-sS", "-o", directory + "/long.folded", "-w", "%{http_code}", "--unix-socket", service.socketPath,
                              "http://x/debug/stacksampler/folded?seconds=6"]
            let longOutput = Pipe()
            long.standardOutput = longOutput
            try long.run()
            // Once the provider says it is profiling, the long request holds the slot.
            let started = Date()
            while Date().timeIntervalSince(started) < 20,
                  !(try service.curl(["--unix-socket", service.socketPath, "http://x/debug/stacksampler/status"]).contains("\"profiling\":true")) {
                usleep(50_000)
            }
            let busy = try service.curl(["-D", "-", "--unix-socket", service.socketPath, "http://x/debug/stacksampler/flamegraph.svg?seconds=1"])
            #expect(busy.hasPrefix("HTTP/1.1 429"), "\(busy.prefix(300))")
            #expect(busy.contains("Retry-After: "), "\(busy.prefix(300))")
            #expect(try service.status(["--unix-socket", service.socketPath, "http://x/debug/stacksampler/status"]) == 200)
            long.waitUntilExit()
            #expect(String(decoding: longOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "200")
            #expect(try String(contentsOfFile: directory + "/long.folded", encoding: .utf8).contains("serve_hot"))

            // The service ran on, and ends with its own status; the socket goes with it.
            #expect(service.process.isRunning)
            finished = true
            #expect(service.finish() == 3, "\(service.stderr)")
            #expect(!FileManager.default.fileExists(atPath: service.socketPath))
            #expect(!service.stderr.contains("stacksampler: "), "\(service.stderr)")
        }
    }
}
