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
