import StackSampler

/// The table `stacksampler top` draws: the hottest functions of one interval's collapsed
/// stacks, with self and total shares and samples, like `py-spy top`.
struct TopTable: Sendable, Equatable {
    /// One function's line.
    struct Row: Sendable, Equatable {
        /// The function's name.
        var name: String
        /// Samples where it was the leaf.
        var selfSamples: Int
        /// Samples where it was anywhere on the stack (once per sample under recursion).
        var totalSamples: Int
    }

    /// Every function, highest self samples first (then total, then name).
    var rows: [Row]
    /// All samples of the interval.
    var sampleCount: Int

    /// The table of collapsed stacks `folded` (thread roots `[name tid=N]` are not functions);
    /// an error names the line that is not collapsed stacks.
    init(folded: String) throws(CollapsedStacksError) {
        let profile = try Profile(collapsedStacks: folded, command: "")
        rows = profile.functionCosts().map { Row(name: $0.name, selfSamples: $0.selfSamples, totalSamples: $0.totalSamples) }
        sampleCount = profile.sampleCount
    }

    /// The table as text: a header, then at most `limit` rows, each cut to `width` columns
    /// (0: not cut). Shares are of all samples, with one decimal.
    func rendered(limit: Int, width: Int = 0) -> String {
        func share(_ samples: Int) -> String {
            guard sampleCount > 0 else { return "0.0%" }
            let tenths = (samples * 1000 + sampleCount / 2) / sampleCount
            return "\(tenths / 10).\(tenths % 10)%"
        }
        func column(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        func cut(_ line: String) -> String { width > 0 && line.count > width ? String(line.prefix(width)) : line }
        var lines = [cut(column("%Self", 7) + column("%Total", 8) + column("Self", 9) + column("Total", 9) + "  Function")]
        for row in rows.prefix(limit) {
            lines.append(cut(column(share(row.selfSamples), 7) + column(share(row.totalSamples), 8)
                + column(String(row.selfSamples), 9) + column(String(row.totalSamples), 9) + "  " + row.name))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
