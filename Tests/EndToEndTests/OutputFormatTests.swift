import Foundation
import Testing

extension EndToEnd {
    /// Several outputs from one run, each in the format its extension or STACKSAMPLER_FORMAT / --format names.
    @Suite struct OutputFormats {
        /// One file per format, named by extension, from one preloaded run: each is what it claims,
        /// and the flame graph and speedscope totals agree with the folded file.
        @Test("preload: comma-separated STACKSAMPLER_OUTPUT writes every format")
        func everyFormatFromOneRun() throws {
            let directory = try ScratchDirectory.make("formats")
            let base = directory + "/profile"
            let paths = [".folded", ".svg", ".pb.gz", ".speedscope.json"].map { base + $0 }
            let run = try ProfiledRun.preload(.split, ["0.5"], settings: ["STACKSAMPLER_PERIOD": "5ms"],
                                              profilePath: paths.joined(separator: ","), in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let folded = try FoldedProfile(contentsOf: paths[0])
            try #require(folded.totalSamples > 0, "no samples in \(paths[0])")
            try OutputFiles.expectFlameGraph(at: paths[1], samples: folded.totalSamples)
            try OutputFiles.expectGzip(at: paths[2])
            #expect(try OutputFiles.speedscopeSamples(at: paths[3], period: 5_000_000) == folded.totalSamples)
        }

        /// STACKSAMPLER_FORMAT overrides the extension.
        @Test("preload: STACKSAMPLER_FORMAT=svg writes a flame graph whatever the file is called")
        func formatVariable() throws {
            let directory = try ScratchDirectory.make("format-variable")
            let path = directory + "/profile.out"
            let run = try ProfiledRun.preload(.split, ["0.3"], settings: ["STACKSAMPLER_FORMAT": "svg"], profilePath: path, in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            try OutputFiles.expectFlameGraph(at: path, samples: nil)
        }

        /// `record -o a.svg -o a.folded` writes both.
        @Test("CLI record: repeated -o writes each format")
        func recordSeveralOutputs() throws {
            let directory = try ScratchDirectory.make("record-formats")
            let svg = directory + "/split.svg", folded = directory + "/split.folded"
            let command = ["record", "--period", "5ms", "-o", svg, "-o", folded, "--", try TestProgram.split.executable(), "0.5"]
            let process = try ChildProcess.run(try BuildProducts.cli(), command, in: directory)
            #expect(process.termination == .exited(0), "\(process)")
            let samples = try FoldedProfile(contentsOf: folded).totalSamples
            try OutputFiles.expectFlameGraph(at: svg, samples: samples)
        }
    }
}
