/// Reconstructed calls as an OTLP `ExportTraceServiceRequest`: one span per call, named by its
/// function, with the call's start and duration (Unix ns: the monotonic times moved by the
/// given realtime offset) and `code.function.name`, `thread.id`, `thread.name` and
/// `stacksampler.samples` attributes (and `stacksampler.cut`, true, for a call whose start or
/// end lay among lost ticks). A call's caller is its span's parent; every call of one root
/// call shares a trace id, derived from the session and the root's id, so calls that end in
/// different windows (a long-lived caller ends after its callees) still meet in one trace. A span
/// id is the call's id, unique within the session.
package enum OTLPTracesEncoder {
    /// Field numbers of trace.proto and trace_service.proto.
    private enum Field {
        enum Request { static let resourceSpans = 1 }
        enum ResourceSpans { static let resource = 1, scopeSpans = 2 }
        enum ScopeSpans { static let scope = 1, spans = 2 }
        enum Span {
            static let traceID = 1, spanID = 2, parentSpanID = 4, name = 5, kind = 6, start = 7, end = 8, attributes = 9
        }
    }

    /// SPAN_KIND_INTERNAL: a call inside the process.
    private static let internalKind: UInt64 = 1

    /// The request of `invocations` (calls of `profile`'s threads, on the monotonic clock) from the
    /// process `resource` describes; `realtimeOffset` is CLOCK_REALTIME − CLOCK_MONOTONIC, in ns
    /// (wrapping); `session` tells this session's trace ids from another's.
    package static func request(_ invocations: [Profile.Invocation], of profile: Profile, realtimeOffset offset: UInt64,
                                resource: OTLPResource, session: UInt64) -> [UInt8] {
        var request = ProtobufWriter()
        request.message(Field.Request.resourceSpans) {
            $0.message(Field.ResourceSpans.resource) { OTLPEncoding.write(resource, to: &$0) }
            $0.message(Field.ResourceSpans.scopeSpans) { scope in
                scope.message(Field.ScopeSpans.scope) { OTLPEncoding.writeScope(to: &$0) }
                for invocation in invocations {
                    scope.message(Field.ScopeSpans.spans) {
                        $0.byteString(Field.Span.traceID, OTLPEncoding.identifier(session: session, value: invocation.traceID))
                        $0.byteString(Field.Span.spanID, OTLPEncoding.bigEndian(invocation.id))
                        if let parent = invocation.parentID { $0.byteString(Field.Span.parentSpanID, OTLPEncoding.bigEndian(parent)) }
                        $0.string(Field.Span.name, invocation.name)
                        $0.uint(Field.Span.kind, internalKind)
                        $0.fixed64(Field.Span.start, invocation.startNanoseconds &+ offset)
                        $0.fixed64(Field.Span.end, invocation.endNanoseconds &+ offset)
                        var attributes = [OTLPAttribute("code.function.name", .string(invocation.name))]
                        if profile.threads.indices.contains(invocation.thread) {
                            let thread = profile.threads[invocation.thread]
                            attributes += [OTLPAttribute("thread.id", .int(Int64(thread.id))), OTLPAttribute("thread.name", .string(thread.name))]
                        }
                        attributes.append(OTLPAttribute("stacksampler.samples", .int(Int64(invocation.samples))))
                        if invocation.isCut { attributes.append(OTLPAttribute("stacksampler.cut", .bool(true))) }
                        for attribute in attributes {
                            $0.message(Field.Span.attributes) { OTLPEncoding.write(attribute, to: &$0) }
                        }
                    }
                }
            }
        }
        return request.bytes
    }
}
