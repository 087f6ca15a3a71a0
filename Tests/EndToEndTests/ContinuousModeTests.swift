import Foundation
import Testing

extension EndToEnd {
    /// Continuous mode (`STACKSAMPLER_CONTINUOUS`): sampling never stops, and every window is a
    /// complete profile of its own, written to rotating files.
    @Suite struct ContinuousMode {
        /// The window profiles (`%t` files) written in `directory` with `prefix`, oldest first.
        static func windowFiles(in directory: String, prefix: String, suffix: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
        }

        /// `window N of a continuous session` from a window's summary.
        static func windowIndex(inSummary text: String) -> Int? {
            guard let range = text.range(of: "window ") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }

        @Test("every window is a whole profile; the windows together account for the CPU the service measured")
        func windowsAddUp() throws {
            let directory = try ScratchDirectory.make("continuous-windows")
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["3", "2"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "500ms",
                "STACKSAMPLER_OUTPUT": directory + "/w-%t.folded", "STACKSAMPLER_PERIOD": "10ms", "STACKSAMPLER_ENGINE": "timer",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let files = try Self.windowFiles(in: directory, prefix: "w-", suffix: ".folded")
            // 3 s in 500 ms windows: 6 whole windows and the partial one at exit (a loaded machine may merge none).
            #expect((5...8).contains(files.count), "\(files)")
            var indices: [Int] = []
            var hotSamples = 0
            for file in files {
                let profile = try FoldedProfile(contentsOf: file)
                hotSamples += profile.inclusiveCount { $0 == "serve_hot" }
                let summary = try String(contentsOfFile: file + ".summary", encoding: .utf8)
                indices.append(try #require(Self.windowIndex(inSummary: summary), "\(summary)"))
                #expect(summary.contains("% of one core"), "\(summary)")
            }
            #expect(indices == Array(1...files.count), "window indices \(indices): a window was lost or written twice")
            for file in files.dropLast() {
                #expect(try FoldedProfile(contentsOf: file).inclusiveCount { $0 == "serve_hot" } > 0, "a whole window without the hot function: \(file)")
            }
            let measured = Double(try #require(ProgramOutput.integer("hot_cpu_us", in: run.stdout))) / 10_000
            #expect(Double(hotSamples) >= 0.7 * measured && Double(hotSamples) <= 1.2 * measured,
                    "serve_hot: \(hotSamples) samples over all windows, the service measured \(measured) periods of CPU there")
        }

        @Test("a Swift program in continuous mode: every whole window names its hot Swift method")
        func swiftServiceWindows() throws {
            let directory = try ScratchDirectory.make("continuous-swift")
            let run = try ChildProcess.run(try TestProgram.matrix.executable(), ["2.5"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "500ms", "STACKSAMPLER_MODE": "wall",
                "STACKSAMPLER_OUTPUT": directory + "/swift-%t.folded",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let files = try Self.windowFiles(in: directory, prefix: "swift-", suffix: ".folded")
            #expect(files.count >= 4, "\(files)")
            for file in files.dropLast() {
                let profile = try FoldedProfile(contentsOf: file)
                let share = profile.inclusiveShare { $0.contains("Matrix.multiply(") }
                #expect(share > 0.5, "\(file): Matrix.multiply( in \(share) of the window's samples")
            }
        }

        @Test("STACKSAMPLER_KEEP keeps exactly the newest N window files, and the oldest are removed")
        func rotationKeepsN() throws {
            let directory = try ScratchDirectory.make("continuous-keep")
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["2.5", "1"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "300ms", "STACKSAMPLER_KEEP": "3",
                "STACKSAMPLER_OUTPUT": directory + "/k-%t.folded,\(directory)/k-%t.pb.gz", "STACKSAMPLER_SUMMARY": directory + "/k-%t.txt",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let folded = try Self.windowFiles(in: directory, prefix: "k-", suffix: ".folded")
            let pprof = try Self.windowFiles(in: directory, prefix: "k-", suffix: ".pb.gz")
            let summaries = try Self.windowFiles(in: directory, prefix: "k-", suffix: ".txt")
            let sides = try Self.windowFiles(in: directory, prefix: "k-", suffix: ".folded.summary")
            #expect(folded.count == 3 && pprof.count == 3 && summaries.count == 3 && sides.count == 3,
                    "kept \(folded.count) folded, \(pprof.count) pprof, \(summaries.count) summaries, \(sides.count) side files")
            let last = try String(contentsOfFile: try #require(summaries.last), encoding: .utf8)
            let index = try #require(Self.windowIndex(inSummary: last), "\(last)")
            #expect(index >= 6, "the newest kept window is window \(index): the oldest were kept instead")
            #expect(last.contains("wrote "), "\(last)")
        }

        @Test("record --continuous writes a file per window, keeps the newest N, prints each window's summary, and passes the exit status on")
        func recordContinuous() throws {
            let directory = try ScratchDirectory.make("continuous-record")
            let result = try ChildProcess.run(try BuildProducts.cli(), [
                "record", "--continuous", "400ms", "--keep", "2", "-o", directory + "/r-%t.folded", "--",
                try TestProgram.windowService.executable(), "1.8", "1",
            ], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            let files = try Self.windowFiles(in: directory, prefix: "r-", suffix: ".folded")
            #expect(files.count == 2, "\(files)")
            let windows = result.stderr.split(separator: "\n").filter { $0.contains("of a continuous session (400ms each)") }
            #expect(windows.count >= 4, "\(result.stderr)")
            let refused = try ChildProcess.run(try BuildProducts.cli(), ["record", "--continuous", "1s", "--follow-children", "--", "/bin/true"], in: directory)
            #expect(refused.termination != .exited(0) && refused.stderr.contains("--follow-children"), "\(refused)")
        }

        @Test("a 30-second soak at 1 kHz wall keeps the service's resident size flat after the first windows")
        func soakKeepsMemoryFlat() throws {
            let directory = try ScratchDirectory.make("continuous-soak")
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["30", "4", "3"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "1s", "STACKSAMPLER_KEEP": "2",
                "STACKSAMPLER_MODE": "wall", "STACKSAMPLER_PERIOD": "1ms",
                "STACKSAMPLER_OUTPUT": directory + "/soak-%t.pb.gz,\(directory)/soak-%t.folded",
            ], in: directory, timeout: .seconds(120))
            #expect(run.termination == .exited(0), "\(run)")
            let start = try #require(ProgramOutput.integer("rss_kb_start", in: run.stdout), "\(run)")
            let largest = try #require(ProgramOutput.integer("rss_kb_max", in: run.stdout), "\(run)")
            #expect(largest - start <= 2048, "resident size grew by \(largest - start) KB after the first windows\n\(run.stdout)")
            let files = try Self.windowFiles(in: directory, prefix: "soak-", suffix: ".folded")
            #expect(files.count == 2, "\(files)")
            let summary = try String(contentsOfFile: try #require(files.last) + ".summary", encoding: .utf8)
            #expect((try #require(Self.windowIndex(inSummary: summary))) >= 25, "\(summary)")
        }
    }
}
