/// The function boundaries of one module from its unwind data, sorted by start, for binary
/// search. Names functions that have no symbol (stripped code) and bounds unsized symbols.
struct FunctionRanges: Sendable {
    private var starts: [UInt64] = []
    private var ends: [UInt64] = []

    /// An empty table (no unwind data).
    init() {}

    /// Sorts `ranges`; of ranges sharing a start the longest is kept.
    init(_ ranges: [Range<UInt64>]) {
        let sorted = ranges.sorted { $0.lowerBound != $1.lowerBound ? $0.lowerBound < $1.lowerBound : $0.upperBound > $1.upperBound }
        starts.reserveCapacity(sorted.count)
        ends.reserveCapacity(sorted.count)
        for range in sorted where starts.last != range.lowerBound {
            starts.append(range.lowerBound)
            ends.append(range.upperBound)
        }
    }

    /// Number of ranges.
    var count: Int { starts.count }

    /// Bytes held by the table.
    var byteCount: Int { (starts.capacity + ends.capacity) * MemoryLayout<UInt64>.size }

    /// The range containing `vaddr`: the one with the greatest start at or below it, if it reaches `vaddr`.
    func range(containing vaddr: UInt64) -> Range<UInt64>? {
        let low = starts.firstIndex(startingAfter: vaddr) { $0 }
        guard low > 0, vaddr < ends[low - 1] else { return nil }
        return starts[low - 1]..<ends[low - 1]
    }

    /// The range that starts exactly at `vaddr`, if any.
    func range(startingAt vaddr: UInt64) -> Range<UInt64>? {
        range(containing: vaddr).flatMap { $0.lowerBound == vaddr ? $0 : nil }
    }
}
