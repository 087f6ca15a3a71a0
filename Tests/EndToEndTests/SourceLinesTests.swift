import Foundation
import Testing

extension EndToEnd {
    /// `--lines` / `STACKSAMPLER_LINES`: inlined calls become frames marked `_[i]`, only when asked for.
    @Suite struct SourceLines {
        /// The share of samples whose stack ends in `suffix` (the frames nearest the leaf).
        static func share(_ profile: FoldedProfile, endingIn suffix: [String]) -> Double {
            let matching = profile.stacks.filter { $0.frames.count >= suffix.count && Array($0.frames.suffix(suffix.count)) == suffix }
            return Double(matching.reduce(0) { $0 + $1.count }) / Double(max(1, profile.totalSamples))
        }

        @Test("record --lines: hot_function then inner_helper_[i] then burn_cpu_[i] at the leaf")
        func recordWithLinesShowsInlinedFrames() throws {
            let directory = try ScratchDirectory.make("lines-on")
            let run = try ProfiledRun.record(.inlined, ["1"], options: ["--lines", "--period", "5ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 50, "only \(profile.totalSamples) samples in 1 s at 5 ms")
            let heaviest = profile.stacks.sorted { $0.count > $1.count }.prefix(3).map { "\($0.count) \($0.frames.joined(separator: ";"))" }
            let share = Self.share(profile, endingIn: ["hot_function", "inner_helper_[i]", "burn_cpu_[i]"])
            #expect(share > 0.85, "\(Int(share * 100)) % end in hot_function;inner_helper_[i];burn_cpu_[i]; heaviest: \(heaviest)")
        }

        @Test("without STACKSAMPLER_LINES: no _[i] frames, the samples are hot_function's")
        func offByDefault() throws {
            let directory = try ScratchDirectory.make("lines-off")
            let run = try ProfiledRun.preload(.inlined, ["1"], settings: ["STACKSAMPLER_PERIOD": "5ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 50, "only \(profile.totalSamples) samples in 1 s at 5 ms")
            #expect(!profile.stacks.contains { $0.frames.contains { $0.hasSuffix("_[i]") } })
            #expect(profile.selfShare { $0 == "hot_function" } > 0.85)
        }

        @Test("STACKSAMPLER_LINES=1 on a stripped program without DWARF: its frames keep their names, none has _[i] frames")
        func strippedProgramWithLines() throws {
            let directory = try ScratchDirectory.make("lines-stripped")
            let run = try ProfiledRun.preload(.stripped, ["1"], settings: ["STACKSAMPLER_PERIOD": "5ms", "STACKSAMPLER_LINES": "1"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 50, "only \(profile.totalSamples) samples in 1 s at 5 ms")
            // libc may have a debug file on this machine (libc6-dbg), so only the program's own frames are checked.
            let inlinedIntoProgram = profile.stacks.filter { stack in
                zip(stack.frames, stack.frames.dropFirst()).contains { $0.hasPrefix("stripped+0x") && $1.hasSuffix("_[i]") }
            }
            #expect(inlinedIntoProgram.isEmpty, "\(inlinedIntoProgram.map { $0.frames.joined(separator: ";") })")
            #expect(profile.selfShare { $0.hasPrefix("stripped+0x") } > 0.85)
        }
    }
}
