/// One line of `/proc/<pid>/maps`.
struct MapsEntry: Equatable {
    var start: UInt
    var end: UInt
    var isExecutable: Bool
    var fileOffset: UInt
    /// The pathname column: an absolute path, a pseudo name such as `[vdso]`, or empty.
    var pathname: String
}

/// Parses the text of `/proc/<pid>/maps` (`start-end perms offset dev inode pathname`).
/// Malformed lines are skipped.
enum MapsParser {
    static func parse(_ text: String) -> [MapsEntry] {
        let bytes = Array(text.utf8)
        var entries: [MapsEntry] = []
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            if let entry = parseLine(bytes[lineStart..<lineEnd]) { entries.append(entry) }
            lineStart = lineEnd + 1
        }
        return entries
    }

    static func parseLine(_ bytes: ArraySlice<UInt8>) -> MapsEntry? {
        var index = bytes.startIndex
        func skipSpaces() {
            while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
        }
        /// The next whitespace-delimited field.
        func field() -> ArraySlice<UInt8>? {
            skipSpaces()
            let begin = index
            while index < bytes.endIndex, bytes[index] != UInt8(ascii: " "), bytes[index] != UInt8(ascii: "\t") { index += 1 }
            return begin < index ? bytes[begin..<index] : nil
        }
        guard let range = field(), let perms = field(), let offset = field(),
              field() != nil /* dev */, field() != nil /* inode */ else { return nil }
        guard let dash = range.firstIndex(of: UInt8(ascii: "-")),
              let start = hexValue(range[range.startIndex..<dash]),
              let end = hexValue(range[(dash + 1)...]),
              let fileOffset = hexValue(offset), start < end, perms.count >= 3 else { return nil }
        skipSpaces()
        let pathname = String(decoding: bytes[index...], as: UTF8.self)
        let isExecutable = perms[perms.startIndex + 2] == UInt8(ascii: "x")
        return MapsEntry(start: start, end: end, isExecutable: isExecutable, fileOffset: fileOffset, pathname: pathname)
    }

    /// Hexadecimal digits (at most 16, no `0x`) as a number; nil if they are not.
    static func hexValue(_ digits: ArraySlice<UInt8>) -> UInt? {
        guard !digits.isEmpty, digits.count <= 16 else { return nil }
        var value: UInt = 0
        for digit in digits {
            let nibble: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt(nibble)
        }
        return value
    }
}
