/// Invocations as Chrome Trace Event JSON: `ph:"M"` records naming the process and each
/// thread, then one complete event (`ph:"X"`) per invocation with `ts`/`dur` in microseconds
/// from the start of the profile, nested in time on each thread (see `InvocationTimeline`);
/// a cut call (start or end among lost ticks) has `cut: true` in its args.
/// `otherData` carries the counts, dropped invocations included.
enum InvocationChromeTraceRenderer: InvocationRenderer {
    static func render(_ profile: Profile) -> [UInt8] {
        let origin = InvocationTimeline.origin(of: profile)
        let pid = profile.processID
        var json = JSONWriter()
        json.beginObject()
        json.key("traceEvents")
        json.beginArray()
        let processName = profile.threads.first { $0.id == pid }?.name ?? "process \(pid)"
        metadata(&json, "process_name", pid: pid, tid: pid, name: processName)
        let timeline = InvocationTimeline(profile.invocations)
        for thread in timeline.threads {
            metadata(&json, "thread_name", pid: pid, tid: profile.threads[thread.thread].id, name: profile.traceThreadName(thread.thread))
        }
        for thread in timeline.threads {
            let tid = profile.threads[thread.thread].id
            for span in thread.spans {
                let invocation = profile.invocations[span.invocation]
                json.beginObject()
                json.field("ph", "X")
                json.field("name", invocation.name)
                json.field("cat", "invocation")
                json.field("ts", Double(span.start - origin) / 1000, decimals: 3)
                json.field("dur", Double(span.end - span.start) / 1000, decimals: 3)
                json.field("pid", pid)
                json.field("tid", tid)
                json.key("args")
                json.beginObject()
                json.field("samples", invocation.samples)
                json.field("id", invocation.id)
                if let parent = invocation.parentID { json.field("parent", parent) }
                json.field("trace", invocation.traceID)
                if invocation.isCut { json.field("cut", true) }
                json.endObject()
                json.endObject()
            }
        }
        json.endArray()
        json.field("displayTimeUnit", "ms")
        json.key("otherData")
        json.beginObject()
        if let configuration = profile.configuration {
            json.field("mode", configuration.mode.rawValue)
            json.field("period", PeriodParser.format(nanoseconds: configuration.periodNanoseconds))
        }
        json.field("invocations", profile.invocationCounts.kept)
        json.field("droppedInvocations", profile.invocationCounts.dropped)
        json.field("filteredInvocations", profile.invocationCounts.filtered)
        json.endObject()
        json.endObject()
        return Array(json.text.utf8)
    }

    private static func metadata(_ json: inout JSONWriter, _ kind: String, pid: Int32, tid: Int32, name: String) {
        json.beginObject()
        json.field("ph", "M")
        json.field("name", kind)
        json.field("pid", pid)
        json.field("tid", tid)
        json.key("args")
        json.beginObject()
        json.field("name", name)
        json.endObject()
        json.endObject()
    }
}
