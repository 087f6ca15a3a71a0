import Foundation

/// A collapsed-stack ("folded") profile: one `root;caller;…;leaf COUNT` line per unique stack.
/// Lines starting with `#` are comments and blank lines are ignored.
struct FoldedProfile {
    /// One unique stack and its sample count.
    struct Stack {
        /// The frames, root first.
        let frames: [String]
        /// The samples that had this stack.
        let count: Int
    }

    /// The stacks, in file order.
    let stacks: [Stack]

    /// All samples in the profile.
    var totalSamples: Int { stacks.reduce(0) { $0 + $1.count } }

    /// Parses folded text; throws on a line that is not `STACK COUNT`, and on one that shows a
    /// frame of the profiler's own code (ProfilerOwnFrames), which no profile may.
    init(parsing text: String) throws {
        var stacks: [Stack] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let count = Int(line[line.index(after: space)...]),
                  count >= 0, space > line.startIndex
            else {
                throw HarnessError("folded line \(index + 1) is not `STACK COUNT`: \(line)")
            }
            let frames = line[..<space].split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            if let own = frames.first(where: ProfilerOwnFrames.contains) {
                throw HarnessError("folded line \(index + 1) shows the profiler's own frame \(own): \(line)")
            }
            stacks.append(Stack(frames: frames, count: count))
        }
        self.stacks = stacks
    }

    /// Reads and parses the folded file at `path`.
    init(contentsOf path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HarnessError("no profile was written to \(path)")
        }
        try self.init(parsing: String(decoding: data, as: UTF8.self))
    }

    /// Samples with a frame anywhere on the stack matching `frame` (each sample counted once).
    func inclusiveCount(where frame: (String) -> Bool) -> Int {
        stacks.filter { $0.frames.contains(where: frame) }.reduce(0) { $0 + $1.count }
    }

    /// Samples whose leaf frame matches `frame`.
    func selfCount(where frame: (String) -> Bool) -> Int {
        stacks.filter { $0.frames.last.map(frame) ?? false }.reduce(0) { $0 + $1.count }
    }

    /// Fraction of all samples with a frame matching `frame` on the stack (0 for an empty profile).
    func inclusiveShare(where frame: (String) -> Bool) -> Double {
        share(inclusiveCount(where: frame))
    }

    /// Fraction of all samples whose leaf frame matches `frame` (0 for an empty profile).
    func selfShare(where frame: (String) -> Bool) -> Double {
        share(selfCount(where: frame))
    }

    /// `count` as a fraction of all samples.
    private func share(_ count: Int) -> Double {
        totalSamples == 0 ? 0 : Double(count) / Double(totalSamples)
    }
}
