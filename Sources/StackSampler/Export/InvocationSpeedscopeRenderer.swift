/// Invocations as a speedscope file: one `evented` profile per thread, in nanoseconds from the
/// start of the profile, each invocation an open (`O`) and a close (`C`) event of its function's
/// frame; events balance and `at` never decreases (see `InvocationTimeline`). The file's name
/// says how many invocations were dropped at the cap.
enum InvocationSpeedscopeRenderer: InvocationRenderer {
    static func render(_ profile: Profile) -> [UInt8] {
        let origin = InvocationTimeline.origin(of: profile)
        var frameIndex: [String: Int] = [:]
        var frameNames: [String] = []
        for invocation in profile.invocations where frameIndex[invocation.name] == nil {
            frameIndex[invocation.name] = frameNames.count
            frameNames.append(invocation.name)
        }
        var json = JSONWriter()
        json.beginObject()
        json.field("$schema", "https://www.speedscope.app/file-format-schema.json")
        let dropped = profile.invocationCounts.dropped
        json.field("name", "stacksampler invocations" + (dropped > 0 ? " (\(dropped) dropped at the cap)" : ""))
        json.field("exporter", "stacksampler")
        json.field("activeProfileIndex", 0)
        json.key("shared")
        json.beginObject()
        json.key("frames")
        json.beginArray()
        for name in frameNames {
            json.beginObject()
            json.field("name", name)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        json.key("profiles")
        json.beginArray()
        for thread in InvocationTimeline(profile.invocations).threads {
            json.beginObject()
            json.field("type", "evented")
            json.field("name", profile.traceThreadName(thread.thread))
            json.field("unit", "nanoseconds")
            json.field("startValue", (thread.spans.first?.start ?? origin) - origin)
            json.field("endValue", (thread.spans.map(\.end).max() ?? origin) - origin)
            json.key("events")
            json.beginArray()
            var open: [Int] = []
            func close(_ span: InvocationTimeline.Span) {
                event(&json, "C", frame: frameIndex[profile.invocations[span.invocation].name]!, at: span.end - origin)
            }
            for (index, span) in thread.spans.enumerated() {
                while let top = open.last, top != span.parent {
                    close(thread.spans[top])
                    open.removeLast()
                }
                event(&json, "O", frame: frameIndex[profile.invocations[span.invocation].name]!, at: span.start - origin)
                open.append(index)
            }
            for top in open.reversed() { close(thread.spans[top]) }
            json.endArray()
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return Array(json.text.utf8)
    }

    private static func event(_ json: inout JSONWriter, _ type: String, frame: Int, at time: UInt64) {
        json.beginObject()
        json.field("type", type)
        json.field("frame", frame)
        json.field("at", time)
        json.endObject()
    }
}
