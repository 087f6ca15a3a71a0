import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A flame graph SVG read back with Foundation's XML parser: its title lines and boxes.
struct FlameGraphDocument {
    /// One box: the tooltip, geometry and fill of a `<g>` under `<g id="frames">`.
    struct Box {
        var tooltip = ""
        var x = 0.0, y = 0.0, width = 0.0
        var fill = ""
        var label: String?

        /// The frame name (the tooltip before ` (`).
        var name: String { tooltip.range(of: " (", options: .backwards).map { String(tooltip[..<$0.lowerBound]) } ?? tooltip }
        /// The sample count the tooltip states (`name (N samples, …)`), if any.
        var samples: Int? {
            guard let open = tooltip.range(of: " (", options: .backwards) else { return nil }
            return Int(tooltip[open.upperBound...].prefix { $0.isNumber })
        }
    }

    var title = ""
    var subtitle = ""
    var boxes: [Box] = []
    var hasScript = false

    /// Parses `bytes`; throws with the parser's error when it is not well-formed XML.
    init(_ bytes: [UInt8]) throws {
        let parser = XMLParser(data: Data(bytes))
        let reader = Reader()
        parser.delegate = reader
        guard parser.parse() else {
            throw FlameGraphError(message: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "unknown error") at line \(parser.lineNumber)")
        }
        self = reader.document
    }

    /// The root box `all`.
    var root: Box? { boxes.first { $0.name == "all" } }

    /// Boxes one level above (flame) or below (icicle) the root.
    func children(ofRoot root: Box, icicle: Bool) -> [Box] {
        boxes.filter { abs($0.y - (root.y + (icicle ? 16 : -16))) < 0.01 }
    }

    struct FlameGraphError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var document = FlameGraphDocument(empty: ())
        private var inFrames = false
        private var current: Box?
        private var textID: String?
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            text = ""
            switch name {
            case "g" where attributes["id"] == "frames": inFrames = true
            case "g" where inFrames: current = Box()
            case "rect" where current != nil:
                current!.x = Double(attributes["x"] ?? "") ?? -1
                current!.y = Double(attributes["y"] ?? "") ?? -1
                current!.width = Double(attributes["width"] ?? "") ?? -1
                current!.fill = attributes["fill"] ?? ""
            case "text": textID = attributes["id"]
            case "script": document.hasScript = true
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            switch name {
            case "title" where current != nil: current!.tooltip = text
            case "text" where current != nil: current!.label = text
            case "text" where textID == "title": document.title = text
            case "text" where textID == "subtitle": document.subtitle = text
            case "g" where current != nil:
                document.boxes.append(current!)
                current = nil
            case "g" where inFrames: inFrames = false
            default: break
            }
            text = ""
        }
    }

    private init(empty: Void) {}
}
