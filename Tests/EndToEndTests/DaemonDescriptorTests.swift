import Foundation
import Testing

extension EndToEnd {
    /// The daemon's descriptors (wake pipe, listening sockets, epoll) against a program that closes
    /// every descriptor, as daemons do, and makes its own pipes on the same numbers.
    @Suite struct DaemonDescriptors {
        @Test("close-everything program with STACKSAMPLER_LISTEN: all 300 pipe messages arrive, no spinning, exit 0, the daemon says it stopped")
        func closedDescriptorsAreNotUsed() throws {
            let directory = try ScratchDirectory.make("daemon-pipes")
            let port = try HTTPEndpoints.freePort()
            let result = try ChildProcess.run(
                try TestProgram.daemonPipes.executable(),
                environment: ["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_LISTEN": "127.0.0.1:\(port)"],
                in: directory, timeout: .seconds(30))
            // Before: 296-300 of 300 received, then an abort at exit (libmicrohttpd's "Close socket
            // failed", 134) or a hang (the server thread blocked reading the program's pipe).
            #expect(result.termination == .exited(0), "\(result)")
            #expect(result.stdout.contains("received 300 of 300"), "\(result)")
            // The whole process's CPU time over the 2 s sleep: about 0 when nothing spins (before:
            // 0.28 s on a loaded machine, up to 1.97 s on a quiet one).
            let cpu = result.stdout.split(separator: "\n").first { $0.hasPrefix("cpu during sleep ") }
                .flatMap { Double($0.dropFirst("cpu during sleep ".count)) }
            #expect(cpu != nil && cpu! < 0.1, "\(result)")
            #expect(result.stderr.contains("the profile endpoints are no longer served"), "\(result)")
            #expect(!result.stderr.contains("Close socket failed"), "\(result)")
        }
    }
}
