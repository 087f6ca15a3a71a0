/// Where the boxes of a flame tree go: x and width in pixels, depth from the root. Children
/// narrower than `minimumWidth` are merged into one box per parent (drawn only if that box
/// is wide enough itself), so a profile of any size draws a bounded number of boxes.
struct FlameLayout {
    /// One box to draw.
    struct Box {
        /// The tree node it shows, or nil for a box of merged narrow frames.
        var node: Int?
        var name: String
        var samples: Int
        var depth: Int
        var x: Double
        var width: Double
    }

    /// Boxes, each parent before its children.
    private(set) var boxes: [Box] = []
    /// The deepest box's depth (0 for the root alone).
    private(set) var maximumDepth = 0

    /// Lays out `tree` across `width` pixels starting at `left`.
    init(_ tree: FlameTree, left: Double, width: Double, minimumWidth: Double) {
        let scale = tree.total > 0 ? width / Double(tree.total) : 0
        boxes.append(Box(node: 0, name: tree.name(of: 0), samples: tree.total, depth: 0, x: left, width: width))
        var pending = [(node: 0, depth: 0, start: 0)]
        while let (parent, depth, start) = pending.popLast() {
            var offset = start
            var narrowSamples = 0
            var narrowCount = 0
            var placed: [(node: Int, depth: Int, start: Int)] = []
            for child in tree.children(of: parent) {
                let samples = tree.nodes[child].samples
                guard samples > 0 else { continue }
                if Double(samples) * scale < minimumWidth {
                    narrowSamples += samples
                    narrowCount += 1
                    continue
                }
                placed.append((child, depth + 1, offset))
                offset += samples
            }
            for (node, childDepth, childStart) in placed {
                add(Box(node: node, name: tree.name(of: node), samples: tree.nodes[node].samples, depth: childDepth,
                        x: 0, width: 0), start: childStart, scale: scale, left: left)
            }
            if narrowCount > 0, Double(narrowSamples) * scale >= minimumWidth {
                add(Box(node: nil, name: "[\(narrowCount) narrow frames merged]", samples: narrowSamples, depth: depth + 1,
                        x: 0, width: 0), start: offset, scale: scale, left: left)
            }
            pending.append(contentsOf: placed.reversed())
        }
    }

    /// Appends `box` at `start` samples from the left edge; x and width are rounded to
    /// hundredths so that adjacent boxes share an edge exactly.
    private mutating func add(_ box: Box, start: Int, scale: Double, left: Double) {
        var box = box
        let from = Self.rounded(left + Double(start) * scale)
        box.x = from
        box.width = Self.rounded(left + Double(start + box.samples) * scale) - from
        boxes.append(box)
        maximumDepth = max(maximumDepth, box.depth)
    }

    private static func rounded(_ value: Double) -> Double {
        (value * 100).rounded() / 100
    }
}
