import Foundation
import Testing

extension EndToEnd {
    /// Where the preload library writes its profile.
    @Suite struct OutputPath {
        /// `%p` in STACKSAMPLER_OUTPUT becomes the profiled process's pid.
        @Test("%p in STACKSAMPLER_OUTPUT is the pid")
        func pidSubstitution() throws {
            let directory = try ScratchDirectory.make("output-pid")
            let run = try ProfiledRun.preload(.exitStatus, ["0"], profilePath: directory + "/profile-%p.folded", in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let expected = directory + "/profile-\(run.process.pid).folded"
            #expect(FileManager.default.fileExists(atPath: expected), "no profile at \(expected)")
        }

        /// A profile written to a device gets no side file beside it: as root, `/dev/null.summary`
        /// used to appear in /dev.
        @Test("-o /dev/null writes no /dev/null.summary")
        func deviceOutputHasNoSideFile() throws {
            let directory = try ScratchDirectory.make("output-device")
            let sideFile = "/dev/null.summary"
            try? FileManager.default.removeItem(atPath: sideFile)
            let run = try ChildProcess.run(try BuildProducts.cli(), ["record", "--mode", "wall", "-o", "/dev/null", "--", try TestProgram.invocations.executable(), "1"],
                                           in: directory)
            defer { try? FileManager.default.removeItem(atPath: sideFile) }
            #expect(run.termination == .exited(0), "\(run)")
            #expect(!FileManager.default.fileExists(atPath: sideFile))
        }
    }
}
