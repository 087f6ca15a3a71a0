import Foundation
import Testing

/// A running test service, started with the preload library and `STACKSAMPLER_LISTEN=unix`.
final class RunningService {
    let process = Process()
    let directory: String

    /// Started with `settings` besides (environment variables), through `launcher` if any (a
    /// command that runs the rest of its arguments, such as `chrt -b 0`, itself not profiled:
    /// the preload library is given to the service only, by `env`).
    init(label: String, seconds: Int = 60, settings: [String: String] = [:], launcher: [String] = []) throws {
        directory = try ScratchDirectory.make(label)
        let preload = "LD_PRELOAD=" + (try BuildProducts.preloadLibrary())
        let command = (launcher.isEmpty ? [] : launcher + ["/usr/bin/env", preload])
            + [try TestProgram.service.executable(), directory + "/stop", String(seconds)]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STACKSAMPLER_") && $0.key != "LD_PRELOAD" }
        if launcher.isEmpty { environment["LD_PRELOAD"] = String(preload.dropFirst("LD_PRELOAD=".count)) }
        environment["STACKSAMPLER_LISTEN"] = "unix"
        environment.merge(settings) { $1 }
        process.environment = environment
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// The service's threads now: tid and name.
    func threads() throws -> [(tid: String, name: String)] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").map { tid in
            (tid, try String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8).trimmingCharacters(in: .newlines))
        }
    }

    /// The tid of the thread named `name` once `ready` holds for it (at most 10 s).
    func waitForThread(named name: String, until ready: (String) throws -> Bool = { _ in true }) throws -> String {
        let end = Date().addingTimeInterval(10)
        while true {
            if let thread = try threads().first(where: { $0.name == name }), try ready(thread.tid) { return thread.tid }
            guard Date() < end else { throw HarnessError("no thread \(name) ready after 10 s: \(try threads())") }
            usleep(20_000)
        }
    }

    /// A field of thread `tid`'s `/proc/…/sched` (`policy`, `prio`, `se.slice`), if the kernel shows it.
    func schedulerField(_ field: String, of tid: String) throws -> String? {
        try String(contentsOfFile: "/proc/\(pid)/task/\(tid)/sched", encoding: .utf8).split(separator: "\n")
            .first { $0.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) == field }
            .flatMap { $0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) }
    }

    /// Waits (at most 10 s) for the daemon's default socket.
    func waitForSocket() throws {
        let socket = "/tmp/stacksampler-\(getuid())/\(pid).sock"
        let end = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < end else { throw HarnessError("no daemon socket \(socket) after 10 s") }
            usleep(20_000)
        }
    }

    deinit {
        _ = FileManager.default.createFile(atPath: directory + "/stop", contents: nil)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

extension EndToEnd {
    /// `stacksampler profile` and `stacksampler top` against a running service's daemon.
    @Suite struct DaemonClient {
        @Test("profile PID writes the next second's collapsed stacks with the hot function")
        func profileWritesTheHotFunction() throws {
            let service = try RunningService(label: "profile-command")
            try service.waitForSocket()
            let output = service.directory + "/x.folded"
            let result = try ChildProcess.run(try BuildProducts.cli(), ["profile", String(service.pid), "--seconds", "1", "-o", output],
                                              in: service.directory, timeout: .seconds(60))
            #expect(result.termination == .exited(0), "\(result)")
            let folded = try String(contentsOfFile: output, encoding: .utf8)
            #expect(folded.contains("serve_hot"), "\(folded)")
        }

        @Test("the profiler's threads are named ss-… where top -H, perf and debuggers list them; the program's thread keeps its name")
        func profilerThreadsAreNamed() throws {
            let service = try RunningService(label: "thread-names", settings: ["STACKSAMPLER_CONTINUOUS": "1s"])
            try service.waitForSocket()
            _ = try service.waitForThread(named: "ss-sampler")
            let names = try service.threads().map(\.name)
            #expect(names.filter { !$0.hasPrefix("ss-") } == ["service"], "\(names)")
            #expect(Set(names).isSuperset(of: ["ss-sampler", "ss-http"]), "\(names)")
        }

        /// A wall sampler that woke some 100 µs after its tick on a busy machine (waiting for a
        /// core) lost the ticks of short sleeps that ended meanwhile: it asks for the shortest
        /// slices, with which a woken thread may preempt the one running (Linux 6.12 on), and
        /// keeps its nice value; under another policy it keeps the program's.
        @Test("the sampler thread asks for short slices under the usual policy (its nice value kept), and keeps the program's policy under another (chrt -b)")
        func samplerSlices() throws {
            var kernel = utsname()
            uname(&kernel)
            let release = withUnsafeBytes(of: kernel.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let version = release.split(separator: ".").prefix(2).compactMap { Int($0.prefix { $0.isNumber }) }
            let shortSlices = version.count == 2 && (version[0], version[1]) >= (6, 12)
            let settings = ["STACKSAMPLER_CONTINUOUS": "1s", "STACKSAMPLER_MODE": "wall"]
            for launcher in [[], ["/usr/bin/nice", "-n", "5"]] {
                let service = try RunningService(label: "slices-usual", settings: settings, launcher: launcher)
                try service.waitForSocket()
                let main = try service.waitForThread(named: "service")
                // Its slices are asked for as it first sleeps, just after it is named.
                let sampler = try service.waitForThread(named: "ss-sampler") { tid in
                    try !shortSlices || service.schedulerField("se.slice", of: tid) == "100000"
                }
                #expect(try service.schedulerField("policy", of: sampler) == "0", "\(launcher)")
                #expect(try service.schedulerField("prio", of: sampler) == service.schedulerField("prio", of: main), "\(launcher)")
            }
            let batch = try RunningService(label: "slices-batch", settings: settings, launcher: ["/usr/bin/chrt", "-b", "0"])
            try batch.waitForSocket()
            let main = try batch.waitForThread(named: "service")
            let sampler = try batch.waitForThread(named: "ss-sampler")
            usleep(100_000) // past its first sleep
            #expect(try batch.schedulerField("policy", of: sampler) == "3")
            #expect(try batch.schedulerField("se.slice", of: sampler) == batch.schedulerField("se.slice", of: main))
        }

        @Test("top PID names the hot function in two plain refreshes")
        func topNamesTheHotFunction() throws {
            let service = try RunningService(label: "top-command")
            try service.waitForSocket()
            let result = try ChildProcess.run(try BuildProducts.cli(), ["top", String(service.pid), "--iterations", "2"],
                                              in: service.directory, timeout: .seconds(60))
            #expect(result.termination == .exited(0), "\(result)")
            #expect(result.stdout.components(separatedBy: "%Self").count == 3, "\(result.stdout)")
            #expect(result.stdout.contains("serve_hot"), "\(result.stdout)")
            #expect(!result.stdout.contains("\u{1B}["), "escape sequences in plain output")
        }

        @Test("profile names the problem: no such process, a process without the preload library")
        func clearErrors() throws {
            let directory = try ScratchDirectory.make("profile-errors")
            let cli = try BuildProducts.cli()
            let missing = try ChildProcess.run(cli, ["profile", "999999999", "-o", directory + "/x.folded"], in: directory)
            #expect(missing.termination == .exited(1))
            #expect(missing.stderr.contains("no process 999999999"), "\(missing.stderr)")
            // A process of this user without the preload library (not the test process itself,
            // whose own tests run profile servers on its default socket meanwhile).
            let sleeper = Process()
            sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
            sleeper.arguments = ["30"]
            try sleeper.run()
            defer { sleeper.terminate() }
            let plain = try ChildProcess.run(cli, ["profile", String(sleeper.processIdentifier), "-o", directory + "/x.folded"], in: directory)
            #expect(plain.termination == .exited(1))
            #expect(plain.stderr.contains("not started with the StackSampler preload library"), "\(plain.stderr)")
            #expect(plain.stderr.contains("STACKSAMPLER_LISTEN=unix"), "\(plain.stderr)")
        }
    }
}
