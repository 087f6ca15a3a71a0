import Testing

extension EndToEnd {
    /// Per-thread root frames (`STACKSAMPLER_PER_THREAD=1`) with the threads' own names.
    @Suite struct PerThread {
        /// Each of the eight `worker_N` functions is sampled, only under its own `[worker-N tid=…]` root.
        @Test("each worker function appears under its own named thread root")
        func workersUnderTheirThreads() throws {
            let directory = try ScratchDirectory.make("threads")
            let run = try ProfiledRun.preload(
                .threads, ["0.3"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_PER_THREAD": "1"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("threads", in: run.process.stdout) == 8, "\(run.process)")
            let profile = try run.profile()

            let unrooted = profile.stacks.filter { ThreadRoot(frame: $0.frames[0]) == nil }
            #expect(unrooted.isEmpty, "stacks without a [NAME tid=N] root: \(unrooted.prefix(3).map(\.frames))")

            var tids: Set<Int> = []
            for index in 0..<8 {
                let function = "worker_\(index)"
                let roots = Set(profile.stacks.filter { $0.frames.contains(function) }.compactMap { ThreadRoot(frame: $0.frames[0]) })
                #expect(roots.map(\.name) == ["worker-\(index)"], "\(function) found under roots \(roots.sorted { $0.tid < $1.tid })")
                tids.formUnion(roots.map(\.tid))
            }
            #expect(tids.count == 8, "worker threads' tids: \(tids.sorted())")
        }
    }
}
