import Foundation
import Testing

extension EndToEnd {
    /// A sample in a procedure linkage table entry is the call it passes through, named
    /// `NAME@plt` as perf names it, not the program's `+0x` address of the table.
    @Suite struct PLTNames {
        @Test("samples in the PLT entry of strtol are named strtol@plt, under the function that calls it")
        func stubsNamedByTheirFunction() throws {
            let directory = try ScratchDirectory.make("plt-names")
            let run = try ProfiledRun.preload(.pltCalls, settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "1ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let calls = profile.inclusiveCount { $0 == "parse_numbers" }
            let stubs = profile.stacks.filter { $0.frames.last == "strtol@plt" }
            let inStub = stubs.reduce(0) { $0 + $1.count }
            let unnamed = profile.stacks.filter { $0.frames.contains { $0.hasPrefix("plt_calls+0x") } }
            print("PLT names: \(inStub) of parse_numbers' \(calls) samples in strtol@plt; unnamed program frames: \(unnamed.map { $0.frames.joined(separator: ";") })")
            // The entry's jump is a few percent of each call (some 5 % here): with hundreds of
            // samples, a handful at least land on it.
            #expect(calls > 200, "parse_numbers has \(calls) samples")
            #expect(inStub >= 3, "\(inStub) samples in strtol@plt of \(calls)")
            #expect(stubs.allSatisfy { $0.frames.dropLast().last == "parse_numbers" }, "\(stubs.map(\.frames))")
            #expect(unnamed.isEmpty, "frames of the program named by address: \(unnamed.map(\.frames))")
        }
    }
}
