import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// Checks that written files are what their format says.
enum OutputFiles {
    /// The file parses as XML, is an SVG with a script, and its root box `all` states `samples`
    /// (when given). Returns the boxes' tooltips.
    @discardableResult
    static func expectFlameGraph(at path: String, samples: Int?) throws -> [String] {
        let data = try #require(FileManager.default.contents(atPath: path), "no file at \(path)")
        let parser = XMLParser(data: data)
        let collector = TooltipCollector()
        parser.delegate = collector
        #expect(parser.parse(), "\(path) is not well-formed XML: \(String(describing: parser.parserError))")
        #expect(collector.root == "svg" && collector.hasScript, "\(path) is not an SVG with a script")
        if let samples {
            #expect(collector.tooltips.contains { $0.hasPrefix("all (\(samples) samples") },
                    "no root box with \(samples) samples in \(path): \(collector.tooltips.prefix(3))")
        }
        return collector.tooltips
    }

    /// The file starts with the gzip magic number.
    static func expectGzip(at path: String) throws {
        let data = try #require(FileManager.default.contents(atPath: path), "no file at \(path)")
        #expect(Array(data.prefix(2)) == [0x1f, 0x8b], "\(path) is not gzip")
    }

    /// Total samples in a speedscope file: its weights (ns) divided by the period.
    static func speedscopeSamples(at path: String, period: Int) throws -> Int {
        let data = try #require(FileManager.default.contents(atPath: path), "no file at \(path)")
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let profiles = try #require(json["profiles"] as? [[String: Any]], "no profiles in \(path)")
        return profiles.flatMap { ($0["weights"] as? [Int]) ?? [] }.reduce(0, +) / period
    }

    private final class TooltipCollector: NSObject, XMLParserDelegate {
        var root: String?
        var hasScript = false
        var tooltips: [String] = []
        private var text = ""

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if root == nil { root = name }
            if name == "script" { hasScript = true }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "title" { tooltips.append(text) }
        }
    }
}
