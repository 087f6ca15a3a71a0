/// The call tree a flame graph draws: frames merged by name along each path from the root
/// `all`, with total and self samples, and for a differential graph the same figures of a
/// baseline profile.
struct FlameTree {
    /// One box: a name at one path from the root.
    struct Node {
        var name: String
        var category: FramePalette.Category
        /// Samples with this node on the stack, and with it as the leaf.
        var samples = 0
        var selfSamples = 0
        /// The same in the baseline profile (differential graphs only).
        var baselineSamples = 0
        var baselineSelfSamples = 0
        /// Child node indices; sorted by name after building.
        var children: [Int] = []
    }

    private struct ChildKey: Hashable {
        var parent: Int
        var name: String
    }

    /// All nodes; index 0 is the root `all`.
    private(set) var nodes = [Node(name: "all", category: .marker)]
    private var childIndex: [ChildKey: Int] = [:]
    /// Total samples of the profile and of the baseline.
    var total: Int { nodes[0].samples }
    var baselineTotal: Int { nodes[0].baselineSamples }

    /// The tree of `profile`'s stacks, as the options show them.
    init(_ profile: Profile, options: ExportOptions) {
        add(profile, options: options, asBaseline: false)
        sortChildren()
    }

    /// The tree of `profile` with `baseline`'s figures beside it, for a differential graph.
    init(_ profile: Profile, baseline: Profile, options: ExportOptions) {
        add(profile, options: options, asBaseline: false)
        add(baseline, options: options, asBaseline: true)
        sortChildren()
    }

    private mutating func add(_ profile: Profile, options: ExportOptions, asBaseline: Bool) {
        var names: [ShownFrame: String] = [:]
        for stack in profile.stacks where stack.count > 0 {
            let frames = profile.shownFrames(of: stack, options: options)
            var node = 0
            count(node, stack.count, isLeaf: frames.isEmpty, asBaseline: asBaseline)
            for (position, frame) in frames.enumerated() {
                let name = names[frame] ?? {
                    let name = profile.name(of: frame)
                    names[frame] = name
                    return name
                }()
                node = child(of: node, named: name) { FramePalette.category(of: frame, in: profile) }
                count(node, stack.count, isLeaf: position == frames.count - 1, asBaseline: asBaseline)
            }
        }
    }

    /// The node reached from `parent` through a frame named `name`, if any stack goes there.
    func child(of parent: Int, named name: String) -> Int? {
        childIndex[ChildKey(parent: parent, name: name)]
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

    private mutating func child(of parent: Int, named name: String, category: () -> FramePalette.Category) -> Int {
        let key = ChildKey(parent: parent, name: name)
        if let known = childIndex[key] { return known }
        nodes.append(Node(name: name, category: category()))
        nodes[parent].children.append(nodes.count - 1)
        childIndex[key] = nodes.count - 1
        return nodes.count - 1
    }

    /// Children in name order, as FlameGraph does, so that graphs of similar profiles look alike.
    private mutating func sortChildren() {
        let names = nodes.map(\.name)
        for index in nodes.indices where nodes[index].children.count > 1 {
            nodes[index].children.sort { names[$0] < names[$1] }
        }
    }
}
