/// Self and total samples per function, and the `--top` table of them.
package struct FunctionCost: Sendable, Equatable {
    /// The function's name.
    package var name: String
    /// Samples where it was the leaf (running itself).
    package var selfSamples: Int
    /// Samples where it was anywhere on the stack, each sample counted once even under recursion.
    package var totalSamples: Int

    /// Creates a cost line.
    package init(name: String, selfSamples: Int, totalSamples: Int) {
        self.name = name
        self.selfSamples = selfSamples
        self.totalSamples = totalSamples
    }
}

extension Profile {
    /// Every function's cost, highest self samples first (then highest total, then by name).
    package func functionCosts() -> [FunctionCost] {
        var costs: [String: FunctionCost] = [:]
        for stack in stacks where stack.count > 0 {
            var seen: Set<String> = []
            for address in stack.addresses {
                let name = name(of: address)
                guard seen.insert(name).inserted else { continue }
                costs[name, default: FunctionCost(name: name, selfSamples: 0, totalSamples: 0)].totalSamples += stack.count
            }
            if let leaf = stack.addresses.last { costs[name(of: leaf)]!.selfSamples += stack.count }
        }
        return costs.values.sorted {
            ($0.selfSamples, $0.totalSamples, $1.name) > ($1.selfSamples, $1.totalSamples, $0.name)
        }
    }

    /// A text table of the `limit` functions with the most self samples: self and total
    /// samples and their shares of all samples, one function per line under a header.
    package func topTable(limit: Int) -> String {
        let total = sampleCount
        func share(_ samples: Int) -> String {
            decimalText(total > 0 ? 100 * Double(samples) / Double(total) : 0, decimals: 2) + "%"
        }
        func column(_ text: String, _ width: Int) -> String {
            String(repeating: " ", count: max(0, width - text.count)) + text
        }
        var lines = [column("self", 10) + column("self%", 9) + column("total", 10) + column("total%", 9) + "  function"]
        for cost in functionCosts().prefix(limit) {
            lines.append(column(String(cost.selfSamples), 10) + column(share(cost.selfSamples), 9)
                + column(String(cost.totalSamples), 10) + column(share(cost.totalSamples), 9) + "  " + cost.name)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
