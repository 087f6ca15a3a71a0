import Foundation
import Testing

/// What Tests/Tools/check-flamegraph.sh needs, so that it installs nothing when a test runs it.
enum HeadlessChromium {
    /// Chromium, python3 (the PNG check) and the DejaVu fonts are installed.
    static let isAvailable = ["/usr/bin/chromium", "/usr/bin/python3"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
        && FileManager.default.fileExists(atPath: "/usr/share/fonts/truetype/dejavu")
    /// Why the browser test is skipped otherwise.
    static let skipReason: Comment = "chromium, python3 or fonts-dejavu-core is not installed (Tests/Tools/check-flamegraph.sh installs them)"
}

extension EndToEnd {
    /// The flame graph in a real browser, through Tests/Tools/check-flamegraph.sh (headless Chromium).
    @Suite(.enabled(if: HeadlessChromium.isAvailable, HeadlessChromium.skipReason)) struct FlameGraphBrowser {
        @Test("a recorded flame graph draws, runs its script, searches and zooms in headless Chromium")
        func drawsInChromium() throws {
            let directory = try ScratchDirectory.make("flamegraph-browser")
            let svg = directory + "/threads.svg"
            let run = try ProfiledRun.preload(.threads, ["0.3"], settings: ["STACKSAMPLER_PER_THREAD": "1"], profilePath: svg, in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let check = try ChildProcess.run(PackagePaths.root + "/Tests/Tools/check-flamegraph.sh", [svg, directory + "/threads.png"],
                                             in: directory, timeout: .seconds(120))
            #expect(check.termination == .exited(0), "\(check)")
            #expect(check.stdout.contains("check-flamegraph: OK"), "\(check)")
        }
    }
}
