/// Views of a profile for reports: stacks kept or dropped by their frames or thread, narrow
/// call paths cut, stacks reversed. Each returns a new profile; thread figures, modules and
/// names stay as they were.
extension Profile {
    /// Only the stacks with a code frame whose name satisfies `matches`.
    package func keepingStacks(containing matches: (String) -> Bool) -> Profile {
        let hits = addresses(named: matches)
        return withStacks(stacks.filter { $0.addresses.contains(where: hits.contains) })
    }

    /// The stacks without any code frame whose name satisfies `matches`.
    package func removingStacks(containing matches: (String) -> Bool) -> Profile {
        let hits = addresses(named: matches)
        return withStacks(stacks.filter { !$0.addresses.contains(where: hits.contains) })
    }

    /// Only the stacks of threads named `name`, or whose thread id is `name`.
    package func keepingThreads(named name: String) -> Profile {
        let wanted = Set(threads.indices.filter { threads[$0].name == name || String(threads[$0].id) == name })
        return withStacks(stacks.filter { wanted.contains($0.thread) })
    }

    /// Code frames on call paths (as `options` shows them) that hold less than `percent` % of
    /// all samples are cut off, with everything above them; their samples stay with the
    /// caller, which then looks like their leaf. Thread roots and cut markers are kept, but for
    /// the marker after the outermost frame of a reversed stack whose outer frames are cut off
    /// (what is missing there is no longer unknown callers). The total is unchanged, and so is
    /// every path that is kept.
    package func trimmingPaths(below percent: Double, options: ExportOptions) -> Profile {
        let tree = FlameTree(self, options: options)
        let minimum = Double(tree.total) * percent / 100
        let trimmed = stacks.map { stack in
            var stack = stack
            var node = 0, address = -1
            for frame in shownFrames(of: stack, options: options) {
                if case .code = frame { address += 1 }
                guard let next = tree.child(of: node, named: name(of: frame)) else { break }
                if case .code = frame, Double(tree.nodes[next].samples) < minimum {
                    stack.addresses.removeLast(stack.addresses.count - address)
                    if stacksAreLeafFirst { stack.cut = nil }
                    break
                }
                node = next
            }
            return stack
        }
        return withStacks(trimmed)
    }

    /// Every stack leaf first, so that the tree shows who calls each hot function.
    package func reversingStacks() -> Profile {
        var reversed = withStacks(stacks.map { stack in
            var stack = stack
            stack.addresses.reverse()
            return stack
        })
        reversed.stacksAreLeafFirst.toggle()
        return reversed
    }

    /// The addresses whose names satisfy `matches` (each name tested once).
    private func addresses(named matches: (String) -> Bool) -> Set<UInt> {
        Set(frames.filter { matches($0.value.name) }.keys)
    }

    private func withStacks(_ stacks: [Stack]) -> Profile {
        var profile = self
        profile.stacks = stacks
        return profile
    }
}
