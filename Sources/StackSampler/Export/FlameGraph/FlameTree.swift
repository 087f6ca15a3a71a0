/// The call tree a flame graph draws: frames merged by name along each path from the root
/// `all`, with total and self samples, and for a differential graph the same figures of a
/// baseline profile.
///
/// Built for large profiles (millions of nodes): nodes hold no references, names are numbers
/// into one table, and children are found through one index array sorted once at the end.
struct FlameTree {
    /// One box: a name at one path from the root.
    struct Node {
        /// Index into the name table (`name(of:)`).
        var nameNumber: Int
        var category: FramePalette.Category
        var parent: Int
        /// Samples with this node on the stack, and with it as the leaf.
        var samples = 0
        var selfSamples = 0
        /// The same in the baseline profile (differential graphs only).
        var baselineSamples = 0
        var baselineSelfSamples = 0
    }

    /// A child by its parent and its name's number (two integers hash much faster than a name).
    private struct ChildKey: Hashable {
        var parent: Int
        var name: Int
    }

    /// All nodes; index 0 is the root `all`.
    private(set) var nodes = [Node(nameNumber: 0, category: .marker, parent: -1)]
    private var names = ["all"]
    private var nameNumbers = ["all": 0]
    private var childIndex: [ChildKey: Int] = [:]
    /// Children of node `n` are `childOrder[childStart[n]..<childStart[n + 1]]`, in name order.
    private var childOrder: [Int] = []
    private var childStart: [Int] = []

    /// Total samples of the profile and of the baseline.
    var total: Int { nodes[0].samples }
    var baselineTotal: Int { nodes[0].baselineSamples }

    /// The tree of `profile`'s stacks, as the options show them.
    init(_ profile: Profile, options: ExportOptions) {
        add(profile, options: options, asBaseline: false)
        indexChildren()
    }

    /// The tree of `profile` with `baseline`'s figures beside it, for a differential graph.
    init(_ profile: Profile, baseline: Profile, options: ExportOptions) {
        add(profile, options: options, asBaseline: false)
        add(baseline, options: options, asBaseline: true)
        indexChildren()
    }

    /// The frame name of `node`.
    func name(of node: Int) -> String {
        names[nodes[node].nameNumber]
    }

    /// The children of `node`, in name order (as FlameGraph draws them, so similar profiles look alike).
    func children(of node: Int) -> ArraySlice<Int> {
        childOrder[childStart[node]..<childStart[node + 1]]
    }

    /// The node reached from `parent` through a frame named `name`, if any stack goes there.
    func child(of parent: Int, named name: String) -> Int? {
        nameNumbers[name].flatMap { childIndex[ChildKey(parent: parent, name: $0)] }
    }

    private mutating func add(_ profile: Profile, options: ExportOptions, asBaseline: Bool) {
        var frameNames: [ShownFrame: (number: Int, category: FramePalette.Category)] = [:]
        childIndex.reserveCapacity(childIndex.count + profile.stacks.reduce(0) { $0 + $1.addresses.count } / 2)
        for stack in profile.stacks where stack.count > 0 {
            let frames = profile.shownFrames(of: stack, options: options)
            var node = 0
            count(node, stack.count, isLeaf: frames.isEmpty, asBaseline: asBaseline)
            for (position, frame) in frames.enumerated() {
                let (number, category) = frameNames[frame] ?? {
                    let named = (nameNumber(profile.name(of: frame)), FramePalette.category(of: frame, in: profile))
                    frameNames[frame] = named
                    return named
                }()
                node = child(of: node, number: number, category: category)
                count(node, stack.count, isLeaf: position == frames.count - 1, asBaseline: asBaseline)
            }
        }
    }

    private mutating func nameNumber(_ name: String) -> Int {
        if let known = nameNumbers[name] { return known }
        names.append(name)
        nameNumbers[name] = names.count - 1
        return names.count - 1
    }

    private mutating func count(_ node: Int, _ samples: Int, isLeaf: Bool, asBaseline: Bool) {
        if asBaseline {
            nodes[node].baselineSamples += samples
            if isLeaf { nodes[node].baselineSelfSamples += samples }
        } else {
            nodes[node].samples += samples
            if isLeaf { nodes[node].selfSamples += samples }
        }
    }

    private mutating func child(of parent: Int, number: Int, category: FramePalette.Category) -> Int {
        let key = ChildKey(parent: parent, name: number)
        if let known = childIndex[key] { return known }
        nodes.append(Node(nameNumber: number, category: category, parent: parent))
        childIndex[key] = nodes.count - 1
        return nodes.count - 1
    }

    /// Groups nodes by parent, in name order within a parent: two stable counting sorts
    /// (by name rank, then by parent), linear in the number of nodes.
    private mutating func indexChildren() {
        let rankOfName = names.indices.sorted { names[$0] < names[$1] }.enumerated()
            .reduce(into: [Int](repeating: 0, count: names.count)) { ranks, entry in ranks[entry.element] = entry.offset }
        let byName = Self.stableCountingSort(Array(nodes.indices.dropFirst()), keys: names.count) { rankOfName[nodes[$0].nameNumber] }
        childOrder = Self.stableCountingSort(byName, keys: nodes.count) { nodes[$0].parent }
        childStart = [Int](repeating: 0, count: nodes.count + 1)
        for node in childOrder { childStart[nodes[node].parent + 1] += 1 }
        for index in 0..<nodes.count { childStart[index + 1] += childStart[index] }
    }

    private static func stableCountingSort(_ items: [Int], keys: Int, key: (Int) -> Int) -> [Int] {
        var starts = [Int](repeating: 0, count: keys + 1)
        for item in items { starts[key(item) + 1] += 1 }
        for index in 0..<keys { starts[index + 1] += starts[index] }
        var sorted = [Int](repeating: 0, count: items.count)
        for item in items {
            sorted[starts[key(item)]] = item
            starts[key(item)] += 1
        }
        return sorted
    }
}
