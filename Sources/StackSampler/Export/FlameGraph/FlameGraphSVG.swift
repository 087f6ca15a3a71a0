/// Writes a laid-out flame tree as one self-contained interactive SVG document: a `<g>` per box
/// with its tooltip (`<title>`), rectangle and label, a title, buttons, and the embedded script.
enum FlameGraphSVG {
    /// What the document shows besides the boxes' geometry.
    struct Content {
        /// The headline (usually the command) and the line under it (mode, period, samples, date).
        var title: String
        var subtitle: String
        /// Root at the top instead of the bottom.
        var icicle: Bool
        /// The tooltip and fill colour of a box. The tooltip is `name (details)`.
        var describe: (FlameLayout.Box) -> (tooltip: String, fill: String)
    }

    /// Document width, side margin and box height in pixels, and the estimated width of one
    /// character of the 12 px label font (Verdana's average, as FlameGraph uses).
    static let width = 1200.0
    static let margin = 10.0
    static let boxHeight = 16.0
    static let characterWidth = 12 * 0.59
    private static let header = 56.0
    private static let footer = 28.0

    /// The drawable width boxes are laid out across.
    static var drawableWidth: Double { width - 2 * margin }

    /// The SVG document, UTF-8.
    static func render(_ layout: FlameLayout, _ content: Content) -> [UInt8] {
        let height = header + Double(layout.maximumDepth + 1) * boxHeight + footer
        var out = ""
        out.reserveCapacity(layout.boxes.count * 160 + 8192)
        out += ##"<?xml version="1.0" encoding="UTF-8" standalone="no"?>"## + "\n"
        out += ##"<svg version="1.1" xmlns="http://www.w3.org/2000/svg" width="\##(number(width))" height="\##(number(height))" viewBox="0 0 \##(number(width)) \##(number(height))">"## + "\n"
        out += "<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}#title{font-size:17px}"
            + ".button{cursor:pointer;fill:#1a4f9c}.button:hover{text-decoration:underline}#frames g{cursor:pointer}"
            + "#frames g:hover rect{stroke:#000;stroke-width:0.5}</style>\n"
        out += "<script type=\"text/ecmascript\"><![CDATA[\n"
        out += "var ICICLE = \(content.icicle), LEFT = \(number(margin)), WIDTH = \(number(drawableWidth)), CHAR = \(number(characterWidth));\n"
        out += FlameGraphScript.source
        out += "\n]]></script>\n"
        out += ##"<rect x="0" y="0" width="100%" height="100%" fill="#fafafa"/>"## + "\n"
        out += ##"<text id="title" x="\##(number(width / 2))" y="22" text-anchor="middle">\##(escaped(content.title))</text>"## + "\n"
        out += ##"<text id="subtitle" x="\##(number(width / 2))" y="42" text-anchor="middle" fill="#555">\##(escaped(content.subtitle))</text>"## + "\n"
        out += ##"<text id="reset" class="button" x="\##(number(margin))" y="22" display="none">Reset Zoom</text>"## + "\n"
        out += ##"<text id="search" class="button" x="\##(number(width - margin))" y="22" text-anchor="end">Search</text>"## + "\n"
        out += ##"<text id="details" x="\##(number(margin))" y="\##(number(height - 9))"> </text>"## + "\n"
        out += ##"<text id="matched" x="\##(number(width - margin))" y="\##(number(height - 9))" text-anchor="end"> </text>"## + "\n"
        out += "<g id=\"frames\">\n"
        for box in layout.boxes {
            let y = content.icicle ? header + Double(box.depth) * boxHeight
                                   : height - footer - Double(box.depth + 1) * boxHeight
            let (tooltip, fill) = content.describe(box)
            out += "<g><title>\(escaped(tooltip))</title><rect x=\"\(number(box.x))\" y=\"\(number(y))\" width=\"\(number(box.width))\" height=\"\(number(boxHeight - 1))\" rx=\"2\" fill=\"\(fill)\"/>"
            let label = label(box.name, width: box.width)
            if !label.isEmpty {
                out += "<text x=\"\(number(box.x + 3))\" y=\"\(number(y + 10.5))\">\(escaped(label))</text>"
            }
            out += "</g>\n"
        }
        out += "</g>\n</svg>\n"
        return Array(out.utf8)
    }

    /// The part of `name` that fits in a box `width` wide, `..` marking a cut; empty when
    /// fewer than three characters fit. The script applies the same rule after zooming.
    static func label(_ name: String, width: Double) -> String {
        let fit = Int(((width - 6) / characterWidth).rounded(.down))
        guard fit >= 3 else { return "" }
        return name.count <= fit ? name : String(name.prefix(fit - 2)) + ".."
    }

    /// A coordinate with at most two decimals and no trailing zeros.
    private static func number(_ value: Double) -> String {
        var text = decimalText(value, decimals: 2)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Text safe inside an XML element or attribute; control characters XML 1.0 forbids become `?`.
    static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20: result += "?"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
