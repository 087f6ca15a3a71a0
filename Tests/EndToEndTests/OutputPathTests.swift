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
    }
}
