/// Binary search in a collection sorted by where its elements start (address ranges, symbols,
/// mappings): the one search every lookup by address uses.
extension RandomAccessCollection where Index == Int {
    /// The index of the first element that starts after `value`, the elements being sorted by
    /// `start` (`endIndex` when none does). The element before that index, if any, is the last
    /// that starts at or before `value`: the one that may cover it.
    func firstIndex<Key: Comparable>(startingAfter value: Key, start: (Element) -> Key) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if start(self[middle]) <= value { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
