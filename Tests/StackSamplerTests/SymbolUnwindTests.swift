import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Function ranges from `.eh_frame`, checked against binutils.
    @Suite struct Unwind {
        /// Static (local) functions only the unwind data bounds once stripped, plus an exported one.
        static let source = #"""
        #include <stdio.h>
        #include <stdlib.h>
        #define HOT __attribute__((noinline))
        static HOT unsigned ss_alpha(unsigned n) { volatile unsigned a = 1; for (unsigned i = 0; i < n; i++) a = a * 31 + i; return a; }
        static HOT unsigned ss_beta(unsigned n) { volatile unsigned a = 2; for (unsigned i = 0; i < n; i++) a ^= a << 3 ^ i; return a; }
        static HOT unsigned ss_gamma(unsigned n) { volatile double a = 1; for (unsigned i = 0; i < n; i++) a = a * 1.0001 + i; return (unsigned)a; }
        HOT unsigned ss_exported(unsigned n) { return ss_alpha(n) + ss_beta(n) + ss_gamma(n); }
        void *ss_addresses[] = { (void *)ss_alpha, (void *)ss_beta, (void *)ss_gamma };
        int main(int argc, char **argv) { (void)argv; printf("%u\n", ss_exported((unsigned)argc)); return 0; }
        """#

        /// `pc=BEGIN..END` of every FDE `readelf --debug-dump=frames` lists.
        static func readelfRanges(_ binary: String) throws -> Set<Range<UInt64>> {
            var ranges = Set<Range<UInt64>>()
            for line in try NativeScratch.run("/usr/bin/readelf", ["--debug-dump=frames", binary]).split(separator: "\n")
            where line.contains(" FDE ") {
                guard let pc = line.split(separator: " ").first(where: { $0.hasPrefix("pc=") }) else { continue }
                let bounds = pc.dropFirst(3).components(separatedBy: "..")
                guard bounds.count == 2, let low = UInt64(bounds[0], radix: 16), let high = UInt64(bounds[1], radix: 16),
                      low < high else { continue }
                ranges.insert(low..<high)
            }
            return ranges
        }

        /// All ranges a table holds, found by probing each readelf range's first and last byte.
        static func check(_ functions: FunctionRanges, against expected: Set<Range<UInt64>>) {
            #expect(functions.count == expected.count)
            for range in expected {
                #expect(functions.range(containing: range.lowerBound) == range)
                #expect(functions.range(containing: range.upperBound - 1) == range)
                #expect(functions.range(startingAt: range.lowerBound) == range)
            }
        }

        @Test("the unwind data's function ranges match readelf's FDEs in PIE and non-PIE executables and in a library, one starting at each function")
        func rangesMatchReadelfForExecutablesAndLibraries() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            for (name, flags) in [("pie", ["-O2", "-fPIE", "-pie"]), ("nopie", ["-O2", "-fno-pie", "-no-pie"]),
                                  ("lib.so", ["-O2", "-shared", "-fPIC"])] {
                let binary = try scratch.compile(Self.source, name: name, flags: flags)
                let expected = try Self.readelfRanges(binary)
                #expect(expected.count >= 4, "\(name): readelf found \(expected.count) FDEs")
                let functions = try #require(ElfFile(path: binary)).functionRanges()
                Self.check(functions, against: expected)
                // Each static function starts an FDE of its own, at the address nm gives it.
                let nm = try NativeScratch.nmValues(binary)
                for function in ["ss_alpha", "ss_beta", "ss_gamma", "ss_exported"] {
                    let value = try #require(nm[function].map(UInt64.init), "\(name): nm lacks \(function)")
                    #expect(functions.range(startingAt: value) != nil, "\(name): no FDE starts at \(function)")
                }
            }
        }

        @Test("without section headers, the eh_frame header leads to the same function ranges")
        func withoutSectionHeadersTheEhFrameHeaderLeadsToTheSameRanges() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let binary = try scratch.compile(Self.source, name: "noshdr", flags: ["-O2"])
            let expected = try Self.readelfRanges(binary)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: binary)))
            // ELF64 header: e_shoff at 0x28 (8 bytes), e_shnum at 0x3c, e_shstrndx at 0x3e (2 bytes each).
            for offset in Array(0x28..<0x30) + Array(0x3c..<0x40) { bytes[offset] = 0 }
            try bytes.withUnsafeBytes { image in
                let file = try #require(ElfFile(image: image))
                #expect(file.sections.isEmpty)
                Self.check(file.functionRanges(), against: expected)
            }
        }

        @Test("stripped static functions are named after their start, each its own name, whichever address inside is asked; the exported one keeps its .dynsym name")
        func strippedStaticFunctionsAreNamedByTheirStart() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let library = try scratch.compile(Self.source, name: "libssunwind.so", flags: ["-O2", "-shared", "-fPIC"])
            let nm = try NativeScratch.nmValues(library)
            let functions = ["ss_alpha", "ss_beta", "ss_gamma"]
            for (name, options) in [("libssunwind_strip.so", []), ("libssunwind_unneeded.so", ["--strip-unneeded"])] {
                let stripped = try scratch.stripped(library, as: name, options: options)
                let handle = try #require(dlopen(stripped, RTLD_NOW | RTLD_LOCAL))
                defer { dlclose(handle) }
                let table = try #require(dlsym(handle, "ss_addresses")).assumingMemoryBound(to: UInt.self)
                let symbolizer = Symbolizer(modules: .current())
                var names = Set<String>()
                for (index, function) in functions.enumerated() {
                    let start = try #require(nm[function])
                    let expected = "\(name)+0x\(String(start, radix: 16))"
                    for inside in [UInt(0), 1, 7] {
                        let frame = symbolizer.symbolize(table[index] + inside)
                        #expect(frame.name == expected, "\(function)+\(inside) in \(name)")
                        #expect(frame.moduleOffset == start + inside && !frame.isResolved)
                    }
                    names.insert(symbolizer.symbolize(table[index]).name)
                }
                #expect(names.count == functions.count, "two stripped functions share a name: \(names)")
                // The exported function keeps its .dynsym name.
                let symbol: UnsafeMutableRawPointer? = dlsym(handle, "ss_exported")
                let exported: UnsafeMutableRawPointer = try #require(symbol)
                #expect(symbolizer.symbolize(UInt(bitPattern: exported) + 1).name == "ss_exported")
            }
        }

        @Test("pointer encodings uleb128, sleb128, udata2, pcrel, datarel and sdata8 are read; past the end, omit, datarel without a base and indirect give none")
        func pointerEncodings() {
            // uleb128 624485, sleb128 -123456, udata2, sdata4 pcrel, datarel sdata4, sdata8.
            let bytes: [UInt8] = [0xe5, 0x8e, 0x26, 0xc0, 0xbb, 0x78, 0x34, 0x12,
                                  0xf0, 0xff, 0xff, 0xff, 0x10, 0x00, 0x00, 0x00,
                                  0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
            bytes.withUnsafeBytes { raw in
                var reader = ByteReader(bytes: raw, baseAddress: 0x40_0000)
                #expect(reader.pointer(PointerEncoding(raw: 0x01), addressSize: 8) == 624_485)
                #expect(reader.pointer(PointerEncoding(raw: 0x09), addressSize: 8) == UInt64(bitPattern: -123_456))
                #expect(reader.pointer(PointerEncoding(raw: 0x02), addressSize: 8) == 0x1234)
                // pcrel: relative to the field's own address, 0x40_0008.
                #expect(reader.pointer(PointerEncoding(raw: 0x1b), addressSize: 8) == 0x40_0008 - 0x10)
                #expect(reader.pointer(PointerEncoding(raw: 0x3b), addressSize: 8, dataBase: 0x5000) == 0x5010)
                #expect(reader.pointer(PointerEncoding(raw: 0x0c), addressSize: 8) == UInt64(bitPattern: -2))
                #expect(reader.remaining == 0)
                #expect(reader.pointer(PointerEncoding(raw: 0x03), addressSize: 8) == nil)
                var other = ByteReader(bytes: raw, baseAddress: 0)
                #expect(other.pointer(.omit, addressSize: 8) == nil)
                #expect(other.pointer(PointerEncoding(raw: 0x3b), addressSize: 8) == nil)  // datarel without a base
                #expect(other.pointer(PointerEncoding(raw: 0x9b), addressSize: 8) == nil)  // indirect
            }
        }
    }
}
