/// The calls table as JSON and as text (`CallTable`).
extension CallTable {
    /// One JSON object: the span, the counts, each function with its percentiles, histogram
    /// (`[[lower bound ns, calls], …]`) and slowest calls, and the calls running at the end.
    package var json: String {
        var json = JSONWriter()
        json.beginObject()
        json.field("start_unix_ns", startUnixNanoseconds)
        json.field("duration_ns", durationNanoseconds)
        json.field("period_ns", periodNanoseconds)
        json.field("calls_kept", counts.kept)
        json.field("calls_filtered", counts.filtered)
        json.field("calls_dropped", counts.dropped)
        json.field("calls_cut", counts.cut)
        json.field("stalls", counts.stalls)
        json.key("functions")
        json.beginArray()
        for function in functions {
            json.beginObject()
            json.field("name", function.name)
            json.field("count", function.count)
            json.field("cut", function.cut)
            json.field("p50_ns", function.p50Nanoseconds)
            json.field("p90_ns", function.p90Nanoseconds)
            json.field("p99_ns", function.p99Nanoseconds)
            json.field("max_ns", function.maxNanoseconds)
            json.key("histogram")
            json.beginArray()
            for index in function.histogram.buckets.keys.sorted() {
                json.beginArray()
                json.integer(DurationHistogram.lowerBound(ofBucket: index))
                json.integer(function.histogram.buckets[index] ?? 0)
                json.endArray()
            }
            json.endArray()
            json.key("slowest")
            Self.write(function.slowest, to: &json)
            json.endObject()
        }
        json.endArray()
        json.key("running")
        Self.write(running, to: &json)
        json.endObject()
        return json.text + "\n"
    }

    /// The table as text: a headline, the `limit` functions with the highest p99 (count,
    /// p50, p90, p99, max), then the slowest calls of the first `slowestShown` functions with
    /// their path, and the calls running at the end.
    package func text(limit: Int = 20, slowestShown: Int = 3) -> String {
        let seconds = decimalText(Double(durationNanoseconds) / 1e9, decimals: 1)
        let droppedNote = (counts.dropped > 0 ? "; \(counts.dropped) more ended past the cap and are not in these figures" : "")
            + (counts.cut > 0 ? "; \(counts.cut) more were cut by ticks the sampler lost (start or end not known) and are only counted" : "")
        var lines = ["calls that ended in \(seconds) s from \(utcDateText(nanosecondsSinceEpoch: startUnixNanoseconds)): "
                     + "\(functions.reduce(0) { $0 + $1.count }) calls of \(functions.count) functions\(droppedNote) "
                     + "(durations from samples every \(Self.duration(periodNanoseconds)))"]
        lines.append(Self.column("Count", 8) + Self.column("p50", 11) + Self.column("p90", 11) + Self.column("p99", 11)
                     + Self.column("Max", 11) + "  Function")
        for function in functions.prefix(limit) {
            lines.append(Self.column(String(function.count), 8) + Self.column(Self.duration(function.p50Nanoseconds), 11)
                         + Self.column(Self.duration(function.p90Nanoseconds), 11) + Self.column(Self.duration(function.p99Nanoseconds), 11)
                         + Self.column(Self.duration(function.maxNanoseconds), 11) + "  " + function.name)
        }
        for function in functions.prefix(limit) where slowestShown > 0 {
            lines.append("slowest calls of \(function.name):")
            for call in function.slowest.prefix(slowestShown) { lines.append("  " + Self.line(call)) }
        }
        if !running.isEmpty {
            lines.append("running at the end (so far):")
            for call in running.prefix(limit) { lines.append("  " + Self.line(call)) }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func write(_ calls: [Call], to json: inout JSONWriter) {
        json.beginArray()
        for call in calls {
            json.beginObject()
            json.field("name", call.name)
            json.field("start_unix_ns", call.startUnixNanoseconds)
            json.field("duration_ns", call.durationNanoseconds)
            json.field("thread", call.threadName)
            json.field("tid", call.tid)
            json.field("samples", call.samples)
            json.key("path")
            json.beginArray()
            for name in call.path { json.string(name) }
            json.endArray()
            json.endObject()
        }
        json.endArray()
    }

    /// `12.3 ms  2026-11-26 20:30:01.123 UTC  thread worker (tid 42): main > serve > handle`
    private static func line(_ call: Call) -> String {
        column(duration(call.durationNanoseconds), 10) + "  " + utcDateText(nanosecondsSinceEpoch: call.startUnixNanoseconds)
            + "  thread \(call.threadName) (tid \(call.tid)): " + (call.path + [call.name]).joined(separator: " > ")
    }

    private static func duration(_ nanoseconds: UInt64) -> String {
        nanoseconds >= 1_000_000_000 ? decimalText(Double(nanoseconds) / 1e9, decimals: 2) + " s"
            : decimalText(Double(nanoseconds) / 1e6, decimals: 1) + " ms"
    }

    private static func column(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
