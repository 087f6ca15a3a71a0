import Glibc

/// File formats a profile can be written in.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Collapsed stacks, as FlameGraph's stackcollapse tools write them: `root;…;leaf COUNT`.
    case folded
    /// A self-contained interactive flame graph (SVG with an embedded script).
    case svg
    /// pprof's gzip-compressed protobuf, for `go tool pprof` and the tools that read it.
    case pprof
    /// speedscope's JSON, one sampled profile per thread.
    case speedscope
}

/// Choices that apply to every format.
public struct ExportOptions: Sendable {
    /// Adds a root frame `[name tid=N]` per thread instead of merging threads.
    public var perThreadRoots: Bool
    /// Adds a root frame `[name pid=N]` for the process (to merge the profiles of a process tree).
    public var processRoot: Bool
    /// Draws flame graphs with the root at the top (an icicle graph).
    public var icicle: Bool

    /// Creates options; by default threads are merged, no process frame is added and flame
    /// graphs stand on their root.
    public init(perThreadRoots: Bool = false, processRoot: Bool = false, icicle: Bool = false) {
        self.perThreadRoots = perThreadRoots
        self.processRoot = processRoot
        self.icicle = icicle
    }
}

/// A pure function from a profile to the bytes of one format.
protocol ProfileRenderer {
    static func render(_ profile: Profile, options: ExportOptions) -> [UInt8]
}

extension OutputFormat {
    var renderer: any ProfileRenderer.Type {
        switch self {
        case .folded: FoldedRenderer.self
        case .svg: FlameGraphRenderer.self
        case .pprof: PprofRenderer.self
        case .speedscope: SpeedscopeRenderer.self
        }
    }
}

extension Profile {
    /// The profile in `format`, as bytes.
    public func rendered(as format: OutputFormat, options: ExportOptions = ExportOptions()) -> [UInt8] {
        format.renderer.render(self, options: options)
    }

    /// Writes the profile to `path` in `format`. Collapsed stacks have no room for the
    /// profiler's own figures (a comment line would be read as a stack by FlameGraph tools), so
    /// a profile recorded here gets them in a side file, `PATH.summary`, where `path` is a
    /// regular file: beside `/dev/null` or a pipe there is no place of the user's for one (as
    /// root, `-o /dev/null` made `/dev/null.summary`).
    public func write(to path: String, format: OutputFormat = .folded, options: ExportOptions = ExportOptions()) throws(ProfilerError) {
        try FileIO.write(rendered(as: format, options: options), to: path)
        var written = stat()
        if format == .folded, measurementLine != nil, stat(path, &written) == 0, written.st_mode & S_IFMT == S_IFREG {
            try FileIO.write(Array(summary.utf8), to: path + ".summary")
        }
    }
}
