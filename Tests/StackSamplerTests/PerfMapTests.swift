import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    @Suite struct PerfMapNaming {
        private static let text = """
            7f00001000 40 JS:~outer /app.js:1:1
            7f00001040 20 JS:*inner /app.js:5:1
            not a line
            0x7f00002000 100 Builtin:InterpreterEntryTrampoline
            7f00001000 80 JS:*outer /app.js:1:1

            """

        @Test("perf map lines name the code they cover; a later line wins where code was reused")
        func lookup() throws {
            let map = PerfMap(text: Array(Self.text.utf8))
            #expect(map.entries.count == 4)
            #expect(map.entry(containing: 0x7f00001000)?.name == "JS:*outer /app.js:1:1")
            #expect(map.entry(containing: 0x7f00001050)?.name == "JS:*outer /app.js:1:1")
            #expect(map.entry(containing: 0x7f00001078)?.name == "JS:*outer /app.js:1:1")
            #expect(map.entry(containing: 0x7f00001080) == nil)
            #expect(map.entry(containing: 0x7f000020ff)?.name == "Builtin:InterpreterEntryTrampoline")
            #expect(map.entry(containing: 0x7f00000fff) == nil)
        }

        @Test("the symbolizer names an address outside every module from the perf map")
        func symbolizerUsesPerfMap() {
            let symbolizer = Symbolizer(modules: ModuleMap(mapsText: ""), perfMap: PerfMap(text: Array(Self.text.utf8)))
            let frame = symbolizer.symbolize(0x7f00002010)
            #expect(frame.name == "Builtin:InterpreterEntryTrampoline")
            #expect(frame.isResolved)
            #expect(symbolizer.functionStart(of: 0x7f00002010) == 0x7f00002000)
            #expect(symbolizer.symbolize(0x7f00003000).name == "[unknown]")
        }
    }
}

extension SymbolTests {
    /// `/tmp/perf-PID.map` read as it grows (a file in a scratch directory here).
    @Suite struct PerfMapGrowth {
        /// A file to write maps into, removed by `remove()`.
        struct MapFile {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("perf-test-\(getpid())-\(UUID().uuidString).map").path

            func write(_ text: String) throws { try text.write(toFile: path, atomically: false, encoding: .utf8) }

            func append(_ text: String) throws {
                let handle = try #require(FileHandle(forWritingAtPath: path))
                defer { try? handle.close() }
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(text.utf8))
            }

            func remove() { try? FileManager.default.removeItem(atPath: path) }
        }

        @Test("only the whole lines appended since the last read are read: a line being written waits for its end, a later line still wins")
        func readsWhatWasAppended() throws {
            let file = MapFile()
            defer { file.remove() }
            let filler = (0..<4).map { "7\($0)00 10 filler line number \($0)\n" }.joined()
            let start = "1000 40 first\n" + filler + "1100 20 second\n"
            try file.write(start)
            var reader = PerfMapFile(path: file.path), map = PerfMap()
            reader.update(&map)
            #expect(map.entry(containing: 0x1000)?.name == "first" && map.entries.count == 6 && reader.offset == start.utf8.count)
            // The first line changed in place (same length, before the end checked): not read again.
            let handle = try #require(FileHandle(forUpdatingAtPath: file.path))
            try handle.write(contentsOf: Data("1000 40 FIRST".utf8))
            try handle.close()
            try file.append("1000 80 reused\n2000 10 half")
            reader.update(&map)
            #expect(map.entries.contains { $0.name == "first" } && !map.entries.contains { $0.name == "FIRST" })
            #expect(map.entry(containing: 0x1010)?.name == "reused" && map.entry(containing: 0x1110)?.name == "second")
            #expect(reader.offset == start.utf8.count + "1000 80 reused\n".utf8.count && map.entry(containing: 0x2000) == nil)
            try file.append(" written\n")
            reader.update(&map)
            #expect(map.entry(containing: 0x2000)?.name == "half written" && map.entries.count == 8)
        }

        @Test("a file truncated, written again past what was read, or replaced is read from its start")
        func startsOverWhenTheFileIsNotTheOneRead() throws {
            let file = MapFile()
            defer { file.remove() }
            try file.write("1000 40 first\n1100 20 second\n")
            var reader = PerfMapFile(path: file.path), map = PerfMap()
            reader.update(&map)
            // Truncated: shorter than what was read.
            try file.write("3000 10 after\n")
            reader.update(&map)
            #expect(map.entries.map(\.name) == ["after"])
            // Truncated and written again past what was read: the end of what was read differs.
            try file.write("4000 10 other\n4100 10 longer than before\n")
            reader.update(&map)
            #expect(map.entries.map(\.name) == ["other", "longer than before"])
            // Replaced by another file (a new inode) that differs only in its first line, past the end
            // checked: only the file's identity tells.
            let filler = (0..<4).map { "7\($0)00 10 filler line number \($0)\n" }.joined()
            try file.write("6000 10 old\n" + filler)
            reader.update(&map)
            #expect(map.entry(containing: 0x6000)?.name == "old")
            let replacement = MapFile()
            try replacement.write("6000 10 new\n" + filler + "8000 10 added\n")
            #expect(rename(replacement.path, file.path) == 0)
            reader.update(&map)
            #expect(map.entry(containing: 0x6000)?.name == "new" && map.entries.count == 6)
            // Gone: no names.
            file.remove()
            reader.update(&map)
            #expect(map.entries.isEmpty && reader.offset == 0)
        }
    }
}
