/// Substring search without the string-processing module, which this library does not load
/// into profiled processes.
extension StringProtocol {
    /// Whether `needle` occurs in the string.
    func containsText(_ needle: some StringProtocol) -> Bool {
        lastRange(of: needle) != nil
    }

    /// The last range where `needle` occurs, if any.
    func lastRange(of needle: some StringProtocol) -> Range<Index>? {
        guard !needle.isEmpty else { return nil }
        var found: Range<Index>?
        var start = startIndex
        while start < endIndex {
            if self[start...].hasPrefix(needle) {
                let end = index(start, offsetBy: needle.count)
                found = start..<end
            }
            start = index(after: start)
        }
        return found
    }
}
