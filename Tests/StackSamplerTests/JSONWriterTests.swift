import Foundation
import Testing
@testable import StackSampler

@Suite struct JSONWriterTests {
    @Test("nested objects, arrays, escaped strings, numbers, booleans and null parse back with Foundation as written")
    func nestedValuesParseBackWithFoundation() throws {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("name", "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓")
        writer.field("count", 42)
        writer.field("ratio", 0.125, decimals: 3)
        writer.field("ok", true)
        writer.key("list")
        writer.beginArray()
        writer.integer(-1)
        writer.beginObject(); writer.endObject()
        writer.beginArray(); writer.endArray()
        writer.null()
        writer.endArray()
        writer.endObject()
        let parsed = try JSONSerialization.jsonObject(with: Data(writer.text.utf8)) as! [String: Any]
        #expect(parsed["name"] as? String == "quote \" backslash \\ newline \n tab \t bell \u{7} é ✓")
        #expect(parsed["count"] as? Int == 42)
        #expect(parsed["ratio"] as? Double == 0.125)
        #expect(parsed["ok"] as? Bool == true)
        let list = try #require(parsed["list"] as? [Any])
        #expect(list.count == 4)
        #expect(list[0] as? Int == -1)
        #expect(list[3] is NSNull)
    }
}
