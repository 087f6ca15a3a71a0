import Foundation
import Testing

extension EndToEnd {
    /// `stacksampler profile PID` asked for several files of one span.
    @Suite struct ProfileCommandFormats {
        @Test("profile PID -o a.pb.gz -o a.folded: the pprof is complete (cpu/nanoseconds, period, mappings), the folded names the hot function",
              .enabled(if: GoPprof.executable != nil, GoPprof.skipReason))
        func severalOutputs() throws {
            let service = try RunningService(label: "profile-formats")
            try service.waitForSocket()
            let pprof = service.directory + "/a.pb.gz", folded = service.directory + "/a.folded"
            let result = try ChildProcess.run(try BuildProducts.cli(), ["profile", String(service.pid), "--seconds", "1", "-o", pprof, "-o", folded],
                                              in: service.directory, timeout: .seconds(60))
            #expect(result.termination == .exited(0), "\(result)")
            // Before: rendered from collapsed stacks, with samples/count only, period 0 and no mappings.
            let raw = try GoPprof.raw(pprof, in: service.directory)
            #expect(raw.contains("samples/count cpu/nanoseconds"), "\(raw.prefix(2000))")
            #expect(raw.contains("Period: 10000000"), "\(raw.prefix(2000))")
            #expect(raw.contains("/service"), "no mapping of the service: \(raw.prefix(4000))")
            #expect(try String(contentsOfFile: folded, encoding: .utf8).contains("serve_hot"))
        }
    }
}
