/// The flame graph: one self-contained interactive SVG, boxes sized by samples, coloured by
/// kind of code (`FramePalette`), root at the bottom (at the top with `options.icicle`).
enum FlameGraphRenderer: ProfileRenderer {
    /// Boxes narrower than this many pixels are merged with their narrow siblings.
    static let minimumBoxWidth = 0.1

    static func render(_ profile: Profile, options: ExportOptions) -> [UInt8] {
        let tree = FlameTree(profile, options: options)
        let layout = FlameLayout(tree, left: FlameGraphSVG.margin, width: FlameGraphSVG.drawableWidth,
                                 minimumWidth: minimumBoxWidth)
        let content = FlameGraphSVG.Content(title: profile.headline, subtitle: [profile.settingsLine, profile.measurementLine].compactMap { $0 }.joined(separator: " · "),
                                            icicle: options.icicle) { box in
            let category = box.node.map { tree.nodes[$0].category } ?? .marker
            return ("\(box.name) (\(box.samples) samples, \(percent(box.samples, of: tree.total)))",
                    FramePalette.colour(of: box.name, category: category))
        }
        return FlameGraphSVG.render(layout, content)
    }

    /// `12.34%`.
    static func percent(_ part: Int, of whole: Int) -> String {
        percent(whole > 0 ? Double(part) / Double(whole) : 0)
    }

    /// A fraction as `12.34%`.
    static func percent(_ fraction: Double) -> String {
        decimalText(fraction * 100, decimals: 2) + "%"
    }
}
