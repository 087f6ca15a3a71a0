/// Collapsed stacks: one line per unique stack, `root;…;leaf COUNT`, root first,
/// integer counts, names without offsets; `;` inside a name becomes `:`.
/// A stack that stops short of its thread's first frame starts with its cut's marker
/// (`[truncated]` at the maximum depth, `[no unwind info]`, `[leaf only]`, `[unwind fault]`).
enum FoldedRenderer: ProfileRenderer {
    static func render(_ profile: Profile, options: ExportOptions) -> [UInt8] {
        var counts: [String: Int] = [:]
        for stack in profile.stacks {
            let line = profile.shownFrames(of: stack, options: options).map { sanitized(profile.name(of: $0)) }.joined(separator: ";")
            counts[line, default: 0] += stack.count
        }
        var text = ""
        for line in counts.keys.sorted() {
            text += "\(line) \(counts[line]!)\n"
        }
        return Array(text.utf8)
    }

    /// A frame name that cannot break the line format (the name itself when it is safe, which
    /// is nearly always: rebuilding every name costs more than the rest of the export).
    static func sanitized(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "\n") }) else { return name }
        return String(name.map { $0 == ";" ? ":" : ($0 == "\n" ? " " : $0) })
    }
}
