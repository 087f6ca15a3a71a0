/// Settings of invocation reconstruction: which closed invocations are kept, how many, and
/// when a running one is reported as a stall. Set `ProfilerConfiguration.invocations` to use it.
public struct InvocationConfiguration: Sendable {
    /// Closed invocations kept in memory; later ones are counted as dropped (0 keeps none, for stall reports only).
    public var capacity: Int
    /// Invocations seen in fewer samples are not kept (from one sample nothing is known of the duration).
    public var minimumSamples: Int
    /// Invocations shorter than this are not kept.
    public var minimumDuration: Duration
    /// Keeps only invocations of functions whose name matches; their parent is the nearest kept caller.
    public var functionPattern: FunctionPattern?
    /// Keeps only invocations fewer than this many frames from the root of their stack.
    public var maxDepth: Int?
    /// An invocation running longer than this is reported once, while it runs (nil: no reports).
    /// In cpu mode a blocked thread is not sampled, so it is reported only once it runs again.
    public var stallThreshold: Duration?
    /// A file the stall reports also go to; they always go to standard error.
    public var stallsPath: String?

    /// Creates settings; by default up to 1,000,000 invocations seen in at least 2 samples are kept, and no stall is reported.
    public init(capacity: Int = SessionSettings.invocationCapacity.defaultValue!,
                minimumSamples: Int = SessionSettings.invocationMinSamples.defaultValue!, minimumDuration: Duration = .zero,
                functionPattern: FunctionPattern? = nil, maxDepth: Int? = nil,
                stallThreshold: Duration? = nil, stallsPath: String? = nil) {
        self.capacity = capacity
        self.minimumSamples = minimumSamples
        self.minimumDuration = minimumDuration
        self.functionPattern = functionPattern
        self.maxDepth = maxDepth
        self.stallThreshold = stallThreshold
        self.stallsPath = stallsPath
    }

    /// Checks the values.
    func validated() throws(ProfilerError) -> InvocationConfiguration {
        do {
            try SessionSettings.invocationCapacity.check(capacity, shown: "invocation capacity \(capacity)")
            try SessionSettings.invocationMinSamples.check(minimumSamples, shown: "minimum samples per invocation \(minimumSamples)")
            if let maxDepth { try SessionSettings.invocationMaxDepth.check(maxDepth, shown: "invocation depth limit \(maxDepth)") }
        } catch {
            throw .invalidConfiguration(error.description)
        }
        if let stallThreshold, stallThreshold <= .zero { throw .invalidConfiguration("stall threshold must be positive") }
        return self
    }
}
