/// File formats reconstructed invocations can be written in.
public enum InvocationFormat: String, Sendable, CaseIterable {
    /// Chrome Trace Event JSON (`{"traceEvents":[…]}`), for Perfetto and chrome://tracing.
    case chrome
    /// speedscope JSON with one evented profile per thread.
    case speedscope
    /// Spans as application monitors use them: `{"spans":[…]}` with ids, parent ids and trace ids.
    case spans
}

/// A pure function from a profile's invocations to the bytes of one format.
protocol InvocationRenderer {
    static func render(_ profile: Profile) -> [UInt8]
}

extension InvocationFormat {
    var renderer: any InvocationRenderer.Type {
        switch self {
        case .chrome: InvocationChromeTraceRenderer.self
        case .speedscope: InvocationSpeedscopeRenderer.self
        case .spans: InvocationSpanRenderer.self
        }
    }
}

extension Profile {
    /// The profile's invocations in `format`, as bytes.
    public func renderedInvocations(as format: InvocationFormat) -> [UInt8] {
        format.renderer.render(self)
    }

    /// Writes the profile's invocations to `path` in `format`.
    public func writeInvocations(to path: String, format: InvocationFormat = .chrome) throws(ProfilerError) {
        try FileIO.write(renderedInvocations(as: format), to: path)
    }

    /// The name of thread index `thread` as trace viewers show it: `name (tid N)`.
    func traceThreadName(_ thread: Int) -> String {
        threads.indices.contains(thread) ? "\(threads[thread].name) (tid \(threads[thread].id))" : "thread \(thread)"
    }
}
