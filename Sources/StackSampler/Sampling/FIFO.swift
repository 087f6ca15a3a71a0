/// A first-in, first-out list whose removals from the front cost nothing: an Array's
/// `removeFirst` moves every element after it, and the wall scheduler takes each thread's ticks
/// and samples from the front, one at a time, thousands of times a second.
struct FIFO<Element>: Sequence {
    private var items: [Element] = []
    /// Index of the first element still in the list; those before it were taken.
    private var head = 0

    /// Whether nothing is left.
    var isEmpty: Bool { head == items.count }
    /// How many elements are left.
    var count: Int { items.count - head }
    /// The oldest element, if any.
    var first: Element? { isEmpty ? nil : items[head] }
    /// The newest element, if any.
    var last: Element? { isEmpty ? nil : items[items.count - 1] }

    /// Adds `element` at the end.
    mutating func append(_ element: Element) { items.append(element) }

    /// Inserts `element` before the first element left that `follows` it, or at the end.
    mutating func insert(_ element: Element, beforeFirst follows: (Element) -> Bool) {
        items.insert(element, at: items[head...].firstIndex(where: follows) ?? items.count)
    }

    /// Changes the newest element in place (the list must not be empty).
    mutating func updateLast(_ change: (inout Element) -> Void) { change(&items[items.count - 1]) }

    /// Takes the oldest element (the list must not be empty). The storage is emptied when the
    /// last is taken, and compacted when most of it has been taken.
    mutating func removeFirst() -> Element {
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            items.removeSubrange(0..<head)
            head = 0
        }
        return element
    }

    /// Removes every element that satisfies `shouldBeRemoved`.
    mutating func removeAll(where shouldBeRemoved: (Element) -> Bool) {
        items.removeSubrange(0..<head)
        head = 0
        items.removeAll(where: shouldBeRemoved)
    }

    /// Removes every element.
    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
        head = 0
    }

    /// The elements left, oldest first.
    func makeIterator() -> ArraySlice<Element>.Iterator { items[head...].makeIterator() }
}
