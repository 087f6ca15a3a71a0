import Testing

extension EndToEnd {
    /// Symbols of a Swift program come out demangled.
    @Suite struct SwiftSymbols {
        /// The matrix program's time shows up in a frame naming `Matrix.multiply(`.
        @Test("Swift program: Matrix.multiply( carries most samples")
        func matrixMultiply() throws {
            let directory = try ScratchDirectory.make("matrix")
            let run = try ProfiledRun.preload(
                .matrix, ["1.5"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "10ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 50, "only \(profile.totalSamples) samples in 1.5 s at 10 ms")
            let share = profile.inclusiveShare { $0.contains("Matrix.multiply(") }
            let heaviest = profile.stacks.sorted { $0.count > $1.count }.prefix(3).map { "\($0.count) \($0.frames.last ?? "")" }
            #expect(share > 0.30, "Matrix.multiply( in \(Int(share * 100)) % of samples; heaviest leaves: \(heaviest)")
        }
    }
}
