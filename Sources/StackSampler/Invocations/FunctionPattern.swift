/// Which function names to keep invocations of: a glob (`*` any run of characters, `?` one
/// character) matched against the whole name when the pattern has a wildcard, else a substring.
public struct FunctionPattern: Sendable, Hashable {
    /// The pattern as given.
    public let text: String
    private let scalars: [Unicode.Scalar]
    private let isGlob: Bool

    /// A pattern from its text: `parse_*`, `*Request?`, or a plain substring such as `render`.
    public init(_ text: String) {
        self.text = text
        scalars = Array(text.unicodeScalars)
        isGlob = scalars.contains("*") || scalars.contains("?")
    }

    /// Whether `name` matches.
    package func matches(_ name: String) -> Bool {
        guard isGlob else { return name.containsText(text) }
        let candidate = Array(name.unicodeScalars)
        // Greedy match with one backtrack point: the last `*` seen and where it started matching.
        var patternIndex = 0, nameIndex = 0
        var starIndex: Int?, starMatch = 0
        while nameIndex < candidate.count {
            if patternIndex < scalars.count, scalars[patternIndex] == "?" || scalars[patternIndex] == candidate[nameIndex] {
                patternIndex += 1
                nameIndex += 1
            } else if patternIndex < scalars.count, scalars[patternIndex] == "*" {
                starIndex = patternIndex
                starMatch = nameIndex
                patternIndex += 1
            } else if let star = starIndex {
                patternIndex = star + 1
                starMatch += 1
                nameIndex = starMatch
            } else {
                return false
            }
        }
        while patternIndex < scalars.count, scalars[patternIndex] == "*" { patternIndex += 1 }
        return patternIndex == scalars.count
    }
}
