import Foundation
import Testing

extension EndToEnd {
    /// A stripped program's static functions are named by where they start, one name each.
    @Suite struct StrippedProgram {
        static let functions = ["hot_one", "hot_two", "hot_three"]

        @Test("stripped program: hot static functions are prog+0xSTART, START from nm of the unstripped build")
        func staticFunctionsNamedByStart() throws {
            let directory = try ScratchDirectory.make("stripped")
            let run = try ProfiledRun.preload(
                .stripped, ["1.5"], settings: ["STACKSAMPLER_MODE": "cpu", "STACKSAMPLER_PERIOD": "5ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 100, "only \(profile.totalSamples) samples in 1.5 s at 5 ms")

            let nm = try ChildProcess.run("nm", ["--defined-only", try TestProgram.stripped.unstrippedExecutable()], in: directory)
            var starts: [String: String] = [:]
            for line in nm.stdout.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count == 3, Self.functions.contains(String(fields[2])),
                      let value = UInt64(fields[0], radix: 16) else { continue }
                starts[String(fields[2])] = "stripped+0x\(String(value, radix: 16))"
            }
            try #require(starts.count == Self.functions.count, "nm lists \(starts)")
            #expect(Set(starts.values).count == Self.functions.count, "two functions would share a name: \(starts)")

            let leaves = profile.stacks.sorted { $0.count > $1.count }.prefix(5).map { "\($0.count) \($0.frames.last ?? "")" }
            var covered = 0.0
            for function in Self.functions {
                let name = try #require(starts[function])
                let share = profile.selfShare { $0 == name }
                covered += share
                #expect(share > 0.10, "\(function) (\(name)) has \(Int(share * 100)) % of the samples; heaviest leaves: \(leaves)")
            }
            #expect(covered > 0.85, "the three functions' frames hold \(Int(covered * 100)) %; heaviest leaves: \(leaves)")
        }

        /// A debug root in `directory` holding the unstripped build's debug file under its build id.
        static func debugRoot(in directory: String) throws -> String {
            let unstripped = try TestProgram.stripped.unstrippedExecutable()
            let notes = try ChildProcess.run("readelf", ["-n", unstripped], in: directory)
            let buildID = try #require(notes.stdout.split(separator: "\n").first { $0.contains("Build ID:") }?
                .split(separator: " ").last.map(String.init), "no build id: \(notes.stdout)")
            let root = directory + "/debug-root"
            let folder = root + "/.build-id/" + buildID.prefix(2)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let objcopy = try ChildProcess.run(
                "objcopy", ["--only-keep-debug", unstripped, folder + "/" + buildID.dropFirst(2) + ".debug"], in: directory)
            try #require(objcopy.termination == .exited(0), "\(objcopy)")
            return root
        }

        @Test("stripped program with a build-id debug file under STACKSAMPLER_DEBUG_ROOT: real names")
        func debugFileGivesRealNames() throws {
            let directory = try ScratchDirectory.make("stripped-debug")
            let root = try Self.debugRoot(in: directory)
            let run = try ProfiledRun.preload(
                .stripped, ["1"], settings: ["STACKSAMPLER_PERIOD": "5ms", "STACKSAMPLER_DEBUG_ROOT": root], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            try #require(profile.totalSamples >= 50, "only \(profile.totalSamples) samples in 1 s at 5 ms")
            let leaves = profile.stacks.sorted { $0.count > $1.count }.prefix(5).map { "\($0.count) \($0.frames.last ?? "")" }
            let covered = profile.selfShare { Self.functions.contains($0) }
            #expect(covered > 0.85, "hot_one/two/three hold \(Int(covered * 100)) % of the leaves; heaviest: \(leaves)")
            #expect(profile.inclusiveShare { $0 == "main" } > 0.85)
        }

        /// Invocation tracking names through the session's one symbolizer, with its debug root:
        /// a filter on a static function's real name finds its calls.
        @Test("--invocation-filter finds a stripped program's static function through --debug-root")
        func invocationFilterUsesTheDebugRoot() throws {
            let directory = try ScratchDirectory.make("stripped-invocations")
            let root = try Self.debugRoot(in: directory)
            let spansPath = directory + "/calls.spans.json"
            let run = try ProfiledRun.record(
                .stripped, ["1"],
                options: ["--mode", "wall", "--period", "1ms", "--debug-root", root, "--invocations", spansPath,
                          "--invocation-format", "spans", "--invocation-filter", "hot_one"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: spansPath)))
            let names = try #require((object as? [String: Any])?["spans"] as? [[String: Any]]).compactMap { $0["operationName"] as? String }
            // About 200 calls of 2.5 ms in 1 s; those seen in two samples or more are kept.
            #expect(names.count >= 20 && Set(names) == ["hot_one"], "\(names.count) spans: \(Set(names))")
        }
    }
}
