import Foundation
import Testing

extension EndToEnd {
    /// The C API (stacksampler.h) from a C program linked against the preload library.
    @Suite struct CAPI {
        /// The `#define STACKSAMPLER_… N` constants of the shipped header.
        static func headerConstants() throws -> [String: Int] {
            let header = try String(contentsOfFile: PackagePaths.root + "/Sources/StackSamplerPreload/include/stacksampler.h", encoding: .utf8)
            var constants: [String: Int] = [:]
            for line in header.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard words.count >= 3, words[0] == "#define", words[1].hasPrefix("STACKSAMPLER_"),
                      let value = Int(words[2].filter { $0 != "(" && $0 != ")" })
                else { continue }
                constants[String(words[1])] = value
            }
            return constants
        }

        @Test("a C program profiles one region of itself and gets the documented error codes")
        func profilesARegion() throws {
            let directory = try ScratchDirectory.make("c-api")
            let folded = directory + "/region.folded", pprof = directory + "/region.pb.gz"
            let result = try ChildProcess.run(try TestProgram.cAPI.executable(), [folded, pprof], in: directory)
            #expect(result.termination == .exited(0), "\(result)")

            let codes = try Self.headerConstants()
            let expected = [
                "stop_before_start": "STACKSAMPLER_ERROR_NOT_RUNNING", "write_before_stop": "STACKSAMPLER_ERROR_NO_PROFILE",
                "bad_mode": "STACKSAMPLER_ERROR_INVALID_ARGUMENT", "bad_period": "STACKSAMPLER_ERROR_INVALID_ARGUMENT",
                "start": "STACKSAMPLER_OK", "start_again": "STACKSAMPLER_ERROR_ALREADY_RUNNING", "stop": "STACKSAMPLER_OK",
                "bad_format": "STACKSAMPLER_ERROR_INVALID_ARGUMENT", "null_path": "STACKSAMPLER_ERROR_INVALID_ARGUMENT",
                "unwritable": "STACKSAMPLER_ERROR_WRITE_FAILED", "write": "STACKSAMPLER_OK", "write_pprof": "STACKSAMPLER_OK",
            ]
            for (call, constant) in expected {
                let code = try #require(codes[constant], "\(constant) is not in stacksampler.h")
                #expect(ProgramOutput.integer(call, in: result.stdout) == code, "\(call): expected \(constant) (\(code))\n\(result)")
            }
            #expect(result.stdout.contains("error_message ok"), "\(result)")

            let profile = try FoldedProfile(contentsOf: folded)
            #expect(profile.inclusiveCount { $0 == "inside_region" } >= 20, "too few samples in the region: \(profile.stacks.map(\.frames))")
            #expect(profile.inclusiveCount { $0 == "before_region" || $0 == "after_region" } == 0,
                    "samples from outside the region: \(profile.stacks.map(\.frames))")
            try OutputFiles.expectGzip(at: pprof)
        }
    }
}
