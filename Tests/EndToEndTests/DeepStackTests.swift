import Foundation
import Testing

extension EndToEnd {
    /// A 100,000-frame recursion is sampled in bounded time: stacks cut at the maximum
    /// depth, marked `[truncated]`, and counted in the summary.
    @Suite struct DeepStacks {
        @Test("recursion 100,000 deep is truncated and marked")
        func deepRecursion() throws {
            let directory = try ScratchDirectory.make("deep")
            let run = try ProfiledRun.preload(
                .deep, ["100000", "1"],
                settings: ["STACKSAMPLER_MAX_DEPTH": "200", "STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(ProgramOutput.integer("depth", in: run.process.stdout) == 100000)
            let profile = try run.profile()
            let deep = profile.stacks.filter { $0.frames.contains("descend") }
            #expect(!deep.isEmpty)
            #expect(deep.allSatisfy { $0.frames.first == "[truncated]" && $0.frames.count <= 201 },
                    "every deep stack starts with [truncated] and holds at most 200 frames")
            let truncated = deep.reduce(0) { $0 + $1.count }
            #expect(run.process.stderr.contains("\(truncated) truncated at depth 200"), "\(run.process.stderr)")
        }
    }
}
