/// File formats a profile can be written in.
public enum OutputFormat: String, Sendable, CaseIterable {
    /// Collapsed stacks, as FlameGraph's stackcollapse tools write them: `root;…;leaf COUNT`.
    case folded
}

/// Choices that apply to every format.
public struct ExportOptions: Sendable {
    /// Adds a root frame `[name tid=N]` per thread instead of merging threads.
    public var perThreadRoots: Bool
    /// Adds a root frame `[name pid=N]` for the process (to merge the profiles of a process tree).
    public var processRoot: Bool

    /// Creates options; by default threads are merged and no process frame is added.
    public init(perThreadRoots: Bool = false, processRoot: Bool = false) {
        self.perThreadRoots = perThreadRoots
        self.processRoot = processRoot
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
        }
    }
}

extension Profile {
    /// The profile in `format`, as bytes.
    public func rendered(as format: OutputFormat, options: ExportOptions = ExportOptions()) -> [UInt8] {
        format.renderer.render(self, options: options)
    }

    /// Writes the profile to `path` in `format`.
    public func write(to path: String, format: OutputFormat = .folded, options: ExportOptions = ExportOptions()) throws(ProfilerError) {
        try FileIO.write(rendered(as: format, options: options), to: path)
    }
}
