import Foundation
import Testing

extension EndToEnd {
    /// Outputs are never written through a symlink named like them: a file the user owns, which
    /// such a link points at, keeps its content, and the output becomes a regular file.
    @Suite struct SymlinkOutputs {
        /// What the user owns and a symlink points at.
        static let ownedContent = "mine, not the profiler's\n"

        /// Makes `owned.txt` in `directory` and a symlink to it for each name.
        static func plantLinks(_ names: [String], in directory: String) throws {
            try ownedContent.write(toFile: directory + "/owned.txt", atomically: false, encoding: .utf8)
            for name in names {
                try FileManager.default.createSymbolicLink(atPath: directory + "/" + name, withDestinationPath: "owned.txt")
            }
        }

        /// Checks that owned.txt is unchanged and each name is now a regular file.
        static func expectReplaced(_ names: [String], in directory: String, _ run: ProcessResult) throws {
            let owned = try String(contentsOfFile: directory + "/owned.txt", encoding: .utf8)
            #expect(owned == ownedContent, "the symlinks' target was written: \(run)")
            for name in names {
                let type = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.type] as? FileAttributeType
                #expect(type == .typeRegular, "\(name) is \(String(describing: type)), not a regular file: \(run)")
            }
        }

        /// Every file the preload library writes: profiles in each format (and the folded
        /// profile's side summary), the summary, the raw stream, invocations and stalls.
        @Test("preload: a symlink named like any output is replaced, its target untouched")
        func preloadOutputs() throws {
            let directory = try ScratchDirectory.make("symlink-preload")
            let profiles = ["p.folded", "p.svg", "p.pb.gz", "p.speedscope.json"]
            let others = ["p.folded.summary", "summary.txt", "raw.bin", "invocations.json", "stalls.txt"]
            try Self.plantLinks(profiles + others, in: directory)
            let path = { (name: String) in directory + "/" + name }
            let run = try ChildProcess.run(
                try TestProgram.split.executable(), ["0.2"],
                environment: [
                    "LD_PRELOAD": try BuildProducts.preloadLibrary(),
                    "STACKSAMPLER_OUTPUT": profiles.map(path).joined(separator: ","),
                    "STACKSAMPLER_SUMMARY": path("summary.txt"), "STACKSAMPLER_RAW": path("raw.bin"),
                    "STACKSAMPLER_INVOCATIONS": path("invocations.json"),
                    "STACKSAMPLER_STALLS": path("stalls.txt"), "STACKSAMPLER_STALL_THRESHOLD": "10ms",
                ],
                in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            try Self.expectReplaced(profiles + others, in: directory, run)
            let folded = try String(contentsOfFile: directory + "/p.folded", encoding: .utf8)
            #expect(folded.contains("work_fifty"), "the profile itself was written: \(folded)")
        }

        /// `stacksampler record` writes its targets the same way, and keeps the program's summary
        /// and raw stream in a directory of its own, made fresh (mkdtemp) with mode 0700 in
        /// TMPDIR, and removed afterwards.
        @Test("record: outputs replace symlinks; the scratch directory is fresh and private")
        func recordOutputs() throws {
            let directory = try ScratchDirectory.make("symlink-record")
            let temporary = directory + "/tmp"
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
            let profiles = ["r.folded", "r.svg"]
            try Self.plantLinks(profiles, in: directory)
            let script = #"d=$(dirname "$STACKSAMPLER_RAW"); echo "scratch $d"; stat -c "mode %a" "$d""#
            let run = try ChildProcess.run(
                try BuildProducts.cli(), ["record", "-o", directory + "/r.folded", "-o", directory + "/r.svg", "--", "/bin/sh", "-c", script],
                environment: ["TMPDIR": temporary], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            try Self.expectReplaced(profiles, in: directory, run)

            let scratch = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("scratch ") }?.dropFirst(8), "\(run)")
            #expect(scratch.hasPrefix(temporary + "/stacksampler-"), "scratch directory \(scratch) is not in TMPDIR")
            #expect(run.stdout.contains("mode 700"), "scratch directory is not private: \(run)")
            #expect(!FileManager.default.fileExists(atPath: String(scratch)), "scratch directory left behind: \(scratch)")
        }
    }
}
