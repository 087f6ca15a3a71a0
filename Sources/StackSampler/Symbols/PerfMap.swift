/// The names a runtime gives the code it generates, from `/tmp/perf-PID.map`: one
/// `START SIZE name` line (hexadecimal, no `0x`) per piece of code, as `node --perf-basic-prof`
/// or `DOTNET_PerfMapEnabled=1` write them, and perf reads them. The file grows while the
/// program runs (`PerfMapFile` reads what is appended) and code freed by the runtime may be
/// reused for other code: a later line wins over an earlier one that covers the same address.
struct PerfMap: Sendable {
    /// One line of the file.
    struct Entry: Sendable {
        var start: UInt
        var end: UInt
        var name: String
        /// The line's position in the file: the higher, the newer.
        var sequence: Int
    }

    /// Lines, sorted by start address (then by sequence).
    private(set) var entries: [Entry]

    /// How many earlier-starting entries a lookup looks back through for an overlapping one.
    private static let overlapLookback = 8

    /// An empty map: no names.
    init() { entries = [] }

    /// Parses the file's text; lines that do not parse are skipped.
    init(text: [UInt8]) {
        entries = []
        append(text[...])
    }

    /// Adds the lines of `text` (the file's next lines), newer than every line so far; lines that
    /// do not parse are skipped.
    mutating func append(_ text: ArraySlice<UInt8>) {
        let count = entries.count
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let start = Self.hex(fields[0]), let size = Self.hex(fields[1]), size > 0,
                  start <= UInt.max - size else { continue }
            entries.append(Entry(start: start, end: start + size, name: String(decoding: fields[2], as: UTF8.self),
                                 sequence: entries.count))
        }
        guard entries.count > count else { return }
        // The entries before are one sorted run: the (run-merging) sort merges the new ones into it.
        entries.sort { ($0.start, $0.sequence) < ($1.start, $1.sequence) }
    }

    /// The name of the newest entry covering `address`, and where that code starts.
    func entry(containing address: UInt) -> Entry? {
        let low = entries.firstIndex(startingAfter: address) { $0.start }
        var found: Entry?
        for index in stride(from: low - 1, through: max(0, low - Self.overlapLookback), by: -1) where index >= 0 {
            let entry = entries[index]
            if address < entry.end, found.map({ entry.sequence > $0.sequence }) ?? true { found = entry }
        }
        return found
    }

    /// Hexadecimal, with or without `0x`.
    private static func hex(_ field: ArraySlice<UInt8>) -> UInt? {
        MapsParser.hexValue(field.starts(with: [UInt8(ascii: "0"), UInt8(ascii: "x")]) ? field.dropFirst(2) : field)
    }
}
