/// Builds JSON text without Foundation (this module is loaded into profiled
/// processes). Values are appended in order; the caller keeps the structure.
package struct JSONWriter {
    /// The text so far.
    package private(set) var text = ""
    private var needsComma: [Bool] = [false]

    /// An empty document.
    package init() {}

    /// Opens an object `{`, as a value or after `key(_:)`.
    package mutating func beginObject() { valueStart(); text += "{"; needsComma.append(false) }
    /// Closes the innermost object.
    package mutating func endObject() { needsComma.removeLast(); text += "}" }
    /// Opens an array `[`.
    package mutating func beginArray() { valueStart(); text += "["; needsComma.append(false) }
    /// Closes the innermost array.
    package mutating func endArray() { needsComma.removeLast(); text += "]" }

    /// Writes an object key; the next call writes its value.
    package mutating func key(_ name: String) {
        valueStart()
        appendString(name)
        text += ":"
        pendingKey = true
    }

    /// Writes a string value.
    package mutating func string(_ value: String) { valueStart(); appendString(value) }
    /// Writes an integer value.
    package mutating func integer<T: BinaryInteger>(_ value: T) { valueStart(); text += String(value) }
    /// Writes a number with up to `decimals` digits after the point (non-finite becomes 0).
    package mutating func number(_ value: Double, decimals: Int = 3) { valueStart(); text += value.isFinite ? decimalText(value, decimals: decimals) : "0" }
    /// Writes true or false.
    package mutating func bool(_ value: Bool) { valueStart(); text += value ? "true" : "false" }
    /// Writes null.
    package mutating func null() { valueStart(); text += "null" }

    /// Writes `"name": "value"` and similar pairs in one call.
    package mutating func field(_ name: String, _ value: String) { key(name); string(value) }
    package mutating func field<T: BinaryInteger>(_ name: String, _ value: T) { key(name); integer(value) }
    package mutating func field(_ name: String, _ value: Double, decimals: Int = 3) { key(name); number(value, decimals: decimals) }
    package mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }

    private var pendingKey = false

    private mutating func valueStart() {
        if pendingKey { pendingKey = false; return }
        if needsComma[needsComma.count - 1] { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendString(_ value: String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
