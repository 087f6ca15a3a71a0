extension Profile {
    /// A differential flame graph of this profile against `baseline` (the "before"): boxes are
    /// shaped by this profile's samples; each is red where its self share of all samples grew,
    /// blue where it shrank, grey where unchanged (shares normalize away different totals;
    /// the strongest change in the graph has the strongest colour). Frames that only the
    /// baseline has take no width and are not drawn.
    package func differentialFlameGraph(against baseline: Profile, options: ExportOptions = ExportOptions()) -> [UInt8] {
        let tree = FlameTree(self, baseline: baseline, options: options)
        let layout = FlameLayout(tree, left: FlameGraphSVG.margin, width: FlameGraphSVG.drawableWidth,
                                 minimumWidth: FlameGraphRenderer.minimumBoxWidth)
        func share(_ samples: Int, _ total: Int) -> Double { total > 0 ? Double(samples) / Double(total) : 0 }
        func selfChange(_ node: FlameTree.Node) -> Double {
            share(node.selfSamples, tree.total) - share(node.baselineSelfSamples, tree.baselineTotal)
        }
        let largest = layout.boxes.compactMap { $0.node.map { abs(selfChange(tree.nodes[$0])) } }.max() ?? 0
        let content = FlameGraphSVG.Content(
            title: "Differential flame graph: \(baseline.headline) → \(headline)",
            subtitle: "red grew, blue shrank (self share of all samples); before \(baseline.sampleCount) samples, after \(sampleCount) samples",
            icicle: options.icicle
        ) { box in
            guard let index = box.node else {
                return ("\(box.name) (\(box.samples) samples)", FramePalette.unchanged)
            }
            let node = tree.nodes[index]
            let change = selfChange(node)
            let percentagePoints = decimalText(change * 100, decimals: 2)
            let tooltip = "\(box.name) (\(node.samples) samples, \(FlameGraphRenderer.percent(node.samples, of: tree.total)); "
                + "before \(node.baselineSamples) samples, \(FlameGraphRenderer.percent(node.baselineSamples, of: tree.baselineTotal)); "
                + "self \(change > 0 ? "+" : "")\(percentagePoints) pp)"
            return (tooltip, FramePalette.differentialColour(change: largest > 0 ? change / largest : 0))
        }
        return FlameGraphSVG.render(layout, content)
    }
}
