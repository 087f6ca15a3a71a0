import Testing
import StackSampler

@Suite struct OutputTargetTests {
    @Test("a file's extension names its format, whatever its case and the directory's name", arguments: [
        ("a.folded", OutputFormat.folded), ("dir.v2/a.collapsed", .folded), ("A.SVG", .svg),
        ("p.pb.gz", .pprof), ("p.pprof", .pprof), ("s.speedscope.json", .speedscope),
    ])
    func extensionNamesTheFormat(path: String, format: OutputFormat) {
        #expect(OutputFormat(path: path) == format)
        #expect(OutputTarget(path: path).format == format)
    }

    @Test("an unknown extension names no format and is written folded; a format given explicitly wins over the extension")
    func unknownExtensionsFallBackToFoldedAndAnExplicitFormatWins() {
        #expect(OutputFormat(path: "profile.json") == nil)
        #expect(OutputFormat(path: "profile.gz") == nil)
        #expect(OutputTarget(path: "profile.txt").format == .folded)
        #expect(OutputTarget(path: "profile.folded", format: .svg).format == .svg)
    }
}
