/// Invocations as spans in the shape application monitors use (Jaeger/OpenTracing style):
/// `{"spans":[{operationName, startTimeMicros, duration, spanContext{id, parentId, traceId},
/// tags{thread, tid, samples, cut (only when true)}}], "droppedSpans": N}`. Times are whole microseconds, the start
/// since the Unix epoch; ids are 16 hex digits; a root span has no `parentId`.
enum InvocationSpanRenderer: InvocationRenderer {
    static func render(_ profile: Profile) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("spans")
        json.beginArray()
        for thread in InvocationTimeline(profile.invocations).threads {
            let threadRecord = profile.threads[thread.thread]
            for span in thread.spans {
                let invocation = profile.invocations[span.invocation]
                // Rounding both ends down keeps every span inside its parent.
                let startMicros = epochMicroseconds(span.start, in: profile)
                json.beginObject()
                json.field("operationName", invocation.name)
                json.field("startTimeMicros", startMicros)
                json.field("duration", epochMicroseconds(span.end, in: profile) - startMicros)
                json.key("spanContext")
                json.beginObject()
                json.field("id", hex(invocation.id))
                if let parent = invocation.parentID { json.field("parentId", hex(parent)) }
                json.field("traceId", hex(invocation.traceID))
                json.endObject()
                json.key("tags")
                json.beginObject()
                json.field("thread", threadRecord.name)
                json.field("tid", threadRecord.id)
                json.field("samples", invocation.samples)
                if invocation.isCut { json.field("cut", true) }
                json.endObject()
                json.endObject()
            }
        }
        json.endArray()
        json.field("droppedSpans", profile.invocationCounts.dropped)
        json.endObject()
        return Array(json.text.utf8)
    }

    /// Whole microseconds since the epoch at monotonic time `time`.
    private static func epochMicroseconds(_ time: UInt64, in profile: Profile) -> UInt64 {
        (profile.realtimeStartNanoseconds &+ time &- profile.startNanoseconds) / 1000
    }

    private static func hex(_ id: UInt64) -> String {
        let digits = String(id, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
