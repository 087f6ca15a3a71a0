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
    }
}
