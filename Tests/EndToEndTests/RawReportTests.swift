import Foundation
import Testing

extension EndToEnd {
    /// A raw recording (`STACKSAMPLER_RAW`) is symbolized offline by `stacksampler report`, into
    /// the same profile the process wrote itself; damage is refused with the byte offset.
    @Suite struct RawReport {
        @Test("report symbolizes a raw recording into the profile the process wrote")
        func offlineMatchesInProcess() throws {
            let directory = try ScratchDirectory.make("raw-report")
            let raw = directory + "/split.raw"
            let run = try ProfiledRun.preload(.split, ["1"], settings: ["STACKSAMPLER_RAW": raw], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let offline = directory + "/offline.folded"
            let report = try ChildProcess.run(try BuildProducts.cli(), ["report", raw, "-o", offline], in: directory)
            #expect(report.termination == .exited(0), "\(report)")
            let inProcess = try run.profile()
            let fromRecording = try FoldedProfile(contentsOf: offline)
            #expect(fromRecording.totalSamples == inProcess.totalSamples)
            for function in ["work_fifty", "work_thirty", "work_twenty"] {
                #expect(fromRecording.inclusiveCount { $0 == function } == inProcess.inclusiveCount { $0 == function }, "\(function)")
            }
        }

        @Test("a damaged recording is refused with the offset of the damage")
        func damagedRecording() throws {
            let directory = try ScratchDirectory.make("raw-damaged")
            let raw = directory + "/split.raw"
            _ = try ProfiledRun.preload(.split, ["0.3"], settings: ["STACKSAMPLER_RAW": raw], in: directory)
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: raw)))
            bytes[bytes.count / 2] ^= 0xFF
            let damaged = directory + "/damaged.raw"
            try Data(bytes).write(to: URL(fileURLWithPath: damaged))
            let report = try ChildProcess.run(try BuildProducts.cli(), ["report", damaged, "-o", directory + "/x.folded"], in: directory)
            #expect(report.termination != .exited(0))
            #expect(report.stderr.contains("at byte"), "\(report.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/x.folded"))
        }
    }
}
