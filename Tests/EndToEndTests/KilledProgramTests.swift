import Foundation
import Testing

extension EndToEnd {
    /// A program that dies before its exit handlers run still yields its profile: `record`
    /// rebuilds it from the stream the program wrote while it ran, and says how it ended.
    @Suite struct KilledPrograms {
        @Test("a program killed with SIGKILL after 2 s yields the samples of those 2 s")
        func sigkill() throws {
            let directory = try ScratchDirectory.make("killed")
            let pidFile = directory + "/victim.pid"
            let output = directory + "/killed.folded"
            let cli = Process()
            cli.executableURL = URL(fileURLWithPath: try BuildProducts.cli())
            cli.arguments = ["record", "-o", output, "--", try TestProgram.victim.executable(), "spin", pidFile]
            let stderr = Pipe()
            cli.standardError = stderr
            cli.standardOutput = FileHandle.nullDevice
            try cli.run()
            let started = Date()
            var victim: pid_t = 0
            while victim == 0, Date().timeIntervalSince(started) < 30 {
                victim = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
                usleep(20_000)
            }
            try #require(victim > 0, "the program never started")
            Thread.sleep(forTimeInterval: 2.0)
            let cpuSeconds = try Self.cpuSeconds(of: victim)
            kill(victim, SIGKILL)
            cli.waitUntilExit()
            let message = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)

            #expect(cli.terminationStatus == 128 + SIGKILL, "\(message)")
            #expect(message.contains("killed by signal 9"), "\(message)")
            let profile = try FoldedProfile(contentsOf: output)
            let work = profile.inclusiveCount { $0 == "victim_work" }
            // A sample per 10 ms of the CPU it used (at most 2 s; less on a loaded machine), less
            // what it used after the last flush (at most 250 ms of it): half of that leaves a wide margin.
            let expected = cpuSeconds * 100
            #expect(work >= 10 && Double(work) >= 0.5 * expected - 25,
                    "\(work) samples in victim_work, which used \(cpuSeconds) s of CPU: \(message)")
        }

        /// The CPU time process `pid` has used (user and system, from /proc/PID/stat), in seconds.
        static func cpuSeconds(of pid: pid_t) throws -> Double {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            // The fields after the command's closing parenthesis: state is the first, utime the 12th, stime the 13th.
            let fields = try #require(stat.split(separator: ")").last?.split(separator: " "))
            let ticks = try #require(Double(fields[11])) + (try #require(Double(fields[12])))
            return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        @Test("_exit, abort and SIGSEGV: profile rebuilt, status propagated",
              arguments: [("exit", Int32(5)), ("abort", 128 + SIGABRT), ("segv", 128 + SIGSEGV)])
        func diesWithoutExitHandlers(ending: String, status: Int32) throws {
            let directory = try ScratchDirectory.make("dies-\(ending)")
            let run = try ProfiledRun.record(.victim, [ending], in: directory)
            #expect(run.process.termination == .exited(status), "\(run.process)")
            #expect(run.process.stderr.contains("profile rebuilt from what it streamed"), "\(run.process.stderr)")
            let profile = try run.profile()
            // 1 s of CPU at 100 Hz is about 100 samples.
            #expect(profile.inclusiveCount { $0 == "victim_work" } >= 40, "\(run.process)")
        }
    }
}
