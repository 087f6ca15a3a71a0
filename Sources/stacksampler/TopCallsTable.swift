import Foundation

/// The table `stacksampler top --calls` draws: the functions of one interval's calls, highest
/// p99 first, from the daemon's calls table (`/debug/stacksampler/calls?format=json`).
struct TopCallsTable: Decodable {
    /// One function's line: its name, calls, and their durations' percentiles and maximum in ns (the JSON's keys).
    struct Function: Decodable {
        var name: String
        var count: Int
        var p50_ns: UInt64
        var p90_ns: UInt64
        var p99_ns: UInt64
        var max_ns: UInt64
    }

    /// Highest p99 first, as the daemon orders them.
    var functions: [Function]
    /// Calls that ended past the cap, not in the figures.
    var calls_dropped: Int
    /// Calls cut by lost ticks (start or end not known), not in the figures.
    var calls_cut: Int
    /// The sampling period, in ns.
    var period_ns: UInt64

    /// The daemon's JSON; an error says it is not a calls table.
    init(json bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(Self.self, from: Data(bytes))
    }

    /// A header, then at most `limit` rows, each cut to `width` columns (0: not cut).
    func rendered(limit: Int, width: Int) -> String {
        func column(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        func milliseconds(_ nanoseconds: UInt64) -> String { String(format: "%.1f ms", Double(nanoseconds) / 1e6) }
        func cut(_ line: String) -> String { width > 0 && line.count > width ? String(line.prefix(width)) : line }
        var lines = [cut(column("Count", 8) + column("p50", 11) + column("p90", 11) + column("p99", 11) + column("Max", 11) + "  Function")]
        for function in functions.prefix(limit) {
            lines.append(cut(column(String(function.count), 8) + column(milliseconds(function.p50_ns), 11) + column(milliseconds(function.p90_ns), 11)
                + column(milliseconds(function.p99_ns), 11) + column(milliseconds(function.max_ns), 11) + "  " + function.name))
        }
        if calls_dropped > 0 { lines.append("(\(calls_dropped) calls ended past the cap and are not in these figures)") }
        if calls_cut > 0 { lines.append("(\(calls_cut) calls cut by ticks the sampler lost, start or end not known, are not in these figures)") }
        return lines.joined(separator: "\n") + "\n"
    }
}
