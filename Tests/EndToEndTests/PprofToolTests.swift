import Testing

extension EndToEnd {
    /// pprof files as `go tool pprof` reads them, against the folded file of the same run.
    @Suite(.enabled(if: GoPprof.executable != nil, GoPprof.skipReason)) struct PprofTool {
        @Test("go tool pprof -top and -traces agree with the folded output of one run")
        func agreesWithFolded() throws {
            let directory = try ScratchDirectory.make("pprof-tool")
            let folded = directory + "/threads.folded", pprof = directory + "/threads.pb.gz"
            let run = try ProfiledRun.preload(.threads, ["0.3"], settings: ["STACKSAMPLER_PERIOD": "5ms"],
                                              profilePath: folded + "," + pprof, in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try FoldedProfile(contentsOf: folded)
            try #require(profile.totalSamples > 0)
            var stacks: [String: Int] = [:]
            var leaves: [String: Int] = [:]
            for stack in profile.stacks {
                stacks[stack.frames.joined(separator: ";"), default: 0] += stack.count
                leaves[stack.frames.last!, default: 0] += stack.count
            }
            let top = try GoPprof.selfSamples(pprof, in: directory)
            #expect(top == leaves, "go tool pprof -top: \(top); folded leaves: \(leaves)")
            let traces = try GoPprof.stacks(pprof, in: directory)
            #expect(traces == stacks, "go tool pprof -traces: \(traces); folded: \(stacks)")
        }
    }
}
