/// A file to write and the format to write it in.
package struct OutputTarget: Sendable, Hashable {
    /// Where the profile goes.
    package var path: String
    /// What it is written as.
    package var format: OutputFormat

    /// A target in `format`, or else in the format the path's extension names (folded when
    /// the extension is not one of `OutputFormat.init(path:)`'s).
    package init(path: String, format: OutputFormat? = nil) {
        self.path = path
        self.format = format ?? OutputFormat(path: path) ?? .folded
    }
}

extension OutputFormat {
    /// The format a file name's ending names: `.folded` or `.collapsed`, `.svg`, `.pb.gz` or
    /// `.pprof`, `.speedscope.json`; nil for any other.
    package init?(path: String) {
        let name = path.lowercased()
        guard let format = Self.extensions.first(where: { name.hasSuffix($0.suffix) })?.format else { return nil }
        self = format
    }

    /// File name endings and the formats they name.
    static let extensions: [(suffix: String, format: OutputFormat)] = [
        (".folded", .folded), (".collapsed", .folded), (".svg", .svg),
        (".pb.gz", .pprof), (".pprof", .pprof), (".speedscope.json", .speedscope),
    ]
}
