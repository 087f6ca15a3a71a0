import Glibc
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Coverage rules of the sorted function table, on synthetic symbols.
    @Suite struct Table {
        /// Names are served from one string table; `nameOffset` indexes `names`.
        static let names = ["sized", "unsized", "next", "alias_small", "alias_big", "last_unsized"]

        static func table(_ symbols: [RawFunctionSymbol], functions: [Range<UInt64>] = []) -> SymbolTable {
            let storage = names.map { strdup($0)! }
            defer { storage.forEach { free($0) } }
            let source = SymbolSource(symbols: symbols) { UnsafePointer(storage[Int($0)]) }
            return SymbolTable(sources: [source], functions: FunctionRanges(functions))
        }

        static func name(_ table: SymbolTable, _ vaddr: UInt64) -> String? {
            table.index(covering: vaddr).map { table.name(at: $0) }
        }

        @Test("a sized symbol covers exactly its range, not the gap before the next one")
        func sizedSymbolCoversExactlyItsRange() {
            let table = Self.table([
                RawFunctionSymbol(value: 0x2000, size: 0x10, sectionEnd: 0x9000, nameOffset: 2),
                RawFunctionSymbol(value: 0x1000, size: 0x20, sectionEnd: 0x9000, nameOffset: 0),
            ])
            #expect(Self.name(table, 0x0fff) == nil)
            #expect(Self.name(table, 0x1000) == "sized")
            #expect(Self.name(table, 0x101f) == "sized")
            // Past the size but before the next symbol: not covered by "sized".
            #expect(Self.name(table, 0x1020) == nil)
            #expect(Self.name(table, 0x1fff) == nil)
            #expect(Self.name(table, 0x2000) == "next")
            #expect(Self.name(table, 0x2010) == nil)
        }

        @Test("an unsized symbol ends at the next symbol or at its section's end, though the unwind data's function reaches further")
        func unsizedSymbolEndsAtNextSymbolOrSectionEnd() {
            let symbols = [
                RawFunctionSymbol(value: 0x1000, size: 0, sectionEnd: 0x9000, nameOffset: 1),
                RawFunctionSymbol(value: 0x3000, size: 0x10, sectionEnd: 0x9000, nameOffset: 2),
                RawFunctionSymbol(value: 0x4000, size: 0, sectionEnd: 0x4100, nameOffset: 5),
            ]
            // Unwind data whose functions reach past the next symbol and the section end.
            let table = Self.table(symbols, functions: [0x1000..<0x3800, 0x4000..<0x5000])
            #expect(Self.name(table, 0x1000) == "unsized")
            #expect(Self.name(table, 0x2fff) == "unsized")
            #expect(Self.name(table, 0x3000) == "next")
            #expect(Self.name(table, 0x40ff) == "last_unsized")
            #expect(Self.name(table, 0x4100) == nil)
        }

        @Test("an unsized symbol covers only what the unwind data's function starting at it covers, and nothing without one")
        func unsizedSymbolNeedsTheUnwindDataToAgree() {
            let symbols = [
                RawFunctionSymbol(value: 0x1000, size: 0, sectionEnd: 0x9000, nameOffset: 1),
                RawFunctionSymbol(value: 0x3000, size: 0x10, sectionEnd: 0x9000, nameOffset: 2),
                RawFunctionSymbol(value: 0x4000, size: 0, sectionEnd: 0x4100, nameOffset: 5),
            ]
            // The function at 0x1000 is shorter than the gap; none starts at 0x4000.
            let table = Self.table(symbols, functions: [0x1000..<0x1200, 0x3ff0..<0x4080])
            #expect(Self.name(table, 0x11ff) == "unsized")
            #expect(Self.name(table, 0x1200) == nil)
            #expect(Self.name(table, 0x2fff) == nil)
            #expect(Self.name(table, 0x4000) == nil)
            #expect(Self.name(table, 0x3000) == "next")
            // No unwind data at all: unsized symbols cover nothing.
            #expect(Self.name(Self.table(symbols), 0x1000) == nil)
        }

        @Test("of aliases at one address, the largest symbol is kept")
        func aliasesAtOneAddressKeepTheLargest() {
            let table = Self.table([
                RawFunctionSymbol(value: 0x1000, size: 0x8, sectionEnd: nil, nameOffset: 3),
                RawFunctionSymbol(value: 0x1000, size: 0x40, sectionEnd: nil, nameOffset: 4),
            ])
            #expect(table.entries.count == 1)
            #expect(Self.name(table, 0x1030) == "alias_big")
        }

        @Test("a file offset becomes a virtual address through the load segment that holds it")
        func fileOffsetsBecomeVaddrsThroughTheirLoadSegment() {
            let segments = [
                LoadSegment(fileOffset: 0, fileSize: 0x500, vaddr: 0),
                LoadSegment(fileOffset: 0x1000, fileSize: 0x2345, vaddr: 0x1000),
                LoadSegment(fileOffset: 0x3e10, fileSize: 0x200, vaddr: 0x4e10),
            ]
            #expect(LoadSegment.vaddr(forFileOffset: 0x1234, in: segments) == 0x1234)
            #expect(LoadSegment.vaddr(forFileOffset: 0x3e20, in: segments) == 0x4e20)
            #expect(LoadSegment.vaddr(forFileOffset: 0x0, in: segments) == 0x0)
        }
    }
}
