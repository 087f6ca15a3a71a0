import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// End-to-end resolution against code built here with gcc, checked against `nm`.
    @Suite(.serialized) struct Native {
        /// A library with an exported, a hidden (absent from .dynsym), an unsized one with
        /// unwind data (CFI) and one without, a short-sized function, and a symbol whose name contains `;`.
        static let librarySource = #"""
        __attribute__((noinline, visibility("hidden"))) int ss_hidden_work(int n) {
            volatile int acc = 0;
            for (int i = 0; i < n; i++) acc += i * 3;
            return acc;
        }
        __attribute__((noinline)) int ss_exported_work(int n) {
            volatile int acc = 1;
            for (int i = 0; i < n; i++) acc ^= i * 7;
            return acc + ss_hidden_work(n);
        }
        void *ss_hidden_address(void) { return (void *)&ss_hidden_work; }
        __asm__(
            ".text\n"
            ".globl ss_short_sized\n.type ss_short_sized,@function\n"
            "ss_short_sized:\n ret\n.size ss_short_sized, 1\n"
            ".rept 32\n nop\n.endr\n"
            ".globl ss_unsized\n.type ss_unsized,@function\n"
            "ss_unsized:\n .cfi_startproc\n .rept 16\n nop\n.endr\n ret\n .cfi_endproc\n"
            ".globl ss_unsized_nocfi\n.type ss_unsized_nocfi,@function\n"
            "ss_unsized_nocfi:\n .rept 16\n nop\n.endr\n ret\n"
            ".globl \"ss_semi;colon\"\n.type \"ss_semi;colon\",@function\n"
            "\"ss_semi;colon\":\n ret\n.size \"ss_semi;colon\", 1\n");
        """#

        /// A program that prints the address of one of its functions, then its own maps.
        static let programSource = #"""
        #include <stdio.h>
        #include <stdint.h>
        __attribute__((noinline)) int ss_main_work(int n) {
            volatile int acc = 0;
            for (int i = 0; i < n; i++) acc += i;
            return acc;
        }
        int main(void) {
            printf("%lx\n", (unsigned long)(uintptr_t)&ss_main_work);
            FILE *maps = fopen("/proc/self/maps", "r");
            int c;
            while (maps && (c = fgetc(maps)) != EOF) putchar(c);
            return ss_main_work(3) == 3 ? 0 : 1;
        }
        """#

        typealias AddressFunction = @convention(c) () -> UnsafeMutableRawPointer?

        static func hex(_ value: UInt) -> String { String(value, radix: 16) }

        @Test("a library's functions are named from its symbols, its stripped copy's hidden ones after their start; padding and unsized symbols without unwind data are not covered")
        func sharedObjectSymbolsAndStrippedFallback() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let library = try scratch.compile(Self.librarySource, name: "libssym_full.so",
                                              flags: ["-O2", "-shared", "-fPIC"])
            let stripped = try scratch.stripped(library, as: "libssym_stripped.so")
            let nm = try NativeScratch.nmValues(library)
            let full = try #require(dlopen(library, RTLD_NOW | RTLD_LOCAL))
            let bare = try #require(dlopen(stripped, RTLD_NOW | RTLD_LOCAL))
            defer { dlclose(full); dlclose(bare) }

            let map = ModuleMap.current()
            let symbolizer = Symbolizer(modules: map)
            func address(_ handle: UnsafeMutableRawPointer, _ name: String) throws -> UInt {
                let symbol: UnsafeMutableRawPointer? = dlsym(handle, name)
                let found: UnsafeMutableRawPointer = try #require(symbol)
                return UInt(bitPattern: found)
            }
            func hiddenAddress(_ handle: UnsafeMutableRawPointer) throws -> UInt {
                let symbol: UnsafeMutableRawPointer? = dlsym(handle, "ss_hidden_address")
                let function = unsafeBitCast(try #require(symbol), to: AddressFunction.self)
                let hidden: UnsafeMutableRawPointer? = function()
                let found: UnsafeMutableRawPointer = try #require(hidden)
                return UInt(bitPattern: found)
            }

            // Exported function, an address a few bytes inside it.
            let exported = symbolizer.symbolize(try address(full, "ss_exported_work") + 3)
            #expect(exported.name == "ss_exported_work")
            #expect(exported.kind == .native && exported.isResolved)
            #expect(exported.moduleOffset == nm["ss_exported_work"].map { $0 + 3 })
            #expect(exported.modulePath.map { URL(fileURLWithPath: $0).lastPathComponent } == "libssym_full.so")
            let module = try #require(map.modules(holding: [try address(full, "ss_exported_work")]).first)
            #expect(module.buildID == (try NativeScratch.readelfBuildID(library)))

            // Hidden function: only in .symtab.
            #expect(symbolizer.symbolize(try hiddenAddress(full) + 2).name == "ss_hidden_work")

            // Stripped copy: exported still resolves through .dynsym; hidden is named after the
            // start of its function in the unwind data, whichever address inside it is asked.
            #expect(symbolizer.symbolize(try address(bare, "ss_exported_work") + 3).name == "ss_exported_work")
            let hiddenStart = try #require(nm["ss_hidden_work"])
            for inside in [UInt(0), 2, 9] {
                let hidden = symbolizer.symbolize(try hiddenAddress(bare) + inside)
                #expect(hidden.name == "libssym_stripped.so+0x\(Self.hex(hiddenStart))")
                #expect(hidden.moduleOffset == hiddenStart + inside && hidden.functionStart == hiddenStart)
                #expect(!hidden.isResolved && hidden.kind == .unknown)
            }

            // Function starts: the symbol's address; in stripped code, the unwind data's function start.
            #expect(symbolizer.functionStart(of: try address(full, "ss_exported_work") + 3) == (try address(full, "ss_exported_work")))
            #expect(symbolizer.functionStart(of: try hiddenAddress(full) + 2) == (try hiddenAddress(full)))
            #expect(symbolizer.functionStart(of: try hiddenAddress(bare) + 2) == (try hiddenAddress(bare)))

            // A sized symbol does not cover the padding after it; an unsized one runs to the next,
            let gap = symbolizer.symbolize(try address(full, "ss_short_sized") + 8)
            #expect(gap.name == "libssym_full.so+0x\(Self.hex(try #require(nm["ss_short_sized"]) + 8))")
            #expect(!gap.isResolved)
            // only where the unwind data has a function starting at the symbol.
            #expect(symbolizer.symbolize(try address(full, "ss_unsized") + 4).name == "ss_unsized")
            let noCFI = try #require(nm["ss_unsized_nocfi"]) + 4
            #expect(symbolizer.symbolize(try address(full, "ss_unsized_nocfi") + 4).name == "libssym_full.so+0x\(Self.hex(noCFI))")

            // ';' would break the folded format.
            #expect(symbolizer.symbolize(try address(full, "ss_semi;colon")).name == "ss_semi:colon")
        }

        /// Runs the program built with `flags` and resolves its printed address from its maps.
        func checkExecutable(flags: [String], name: String) throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let program = try scratch.compile(Self.programSource, name: name, flags: ["-O2"] + flags)
            let stripped = try scratch.stripped(program, as: "\(name)_stripped")
            let start = try #require(NativeScratch.nmValues(program)["ss_main_work"])
            let expected = start + 1
            for (binary, resolves) in [(program, true), (stripped, false)] {
                let output = try NativeScratch.run(binary, [])
                let firstLine = try #require(output.split(separator: "\n").first)
                let address = try #require(UInt(firstLine, radix: 16))
                let symbolizer = Symbolizer(modules: ModuleMap(mapsText: String(output.dropFirst(firstLine.count + 1))))
                let frame = symbolizer.symbolize(address + 1)
                #expect(frame.moduleOffset == expected)
                let basename = URL(fileURLWithPath: binary).lastPathComponent
                #expect(frame.name == (resolves ? "ss_main_work" : "\(basename)+0x\(Self.hex(start))"))
                #expect(frame.functionStart == start)
            }
        }

        @Test("a PIE executable's function is named from its symbols, and after its start when stripped")
        func pieExecutable() throws {
            try checkExecutable(flags: ["-fPIE", "-pie"], name: "ssym_pie")
        }

        @Test("a non-PIE executable's function is named from its symbols, and after its start when stripped")
        func nonPieExecutable() throws {
            try checkExecutable(flags: ["-fno-pie", "-no-pie"], name: "ssym_nopie")
        }
    }
}

extension SymbolTests.Native {
    /// The vDSO has no file: it is read from memory, and checked against `nm` on a dump of it.
    @Test("the vDSO's functions are named from its image in memory, as nm names them in a dump of it")
    func vdsoFromMemory() throws {
        let map = ModuleMap.current()
        let region = try #require(map.pseudoRegions.first { $0.name == "[vdso]" })
        let scratch = try NativeScratch()
        defer { scratch.remove() }
        let dump = scratch.path("vdso.so")
        let image = Data(bytes: try #require(UnsafeRawPointer(bitPattern: region.start)), count: Int(region.end - region.start))
        try image.write(to: URL(fileURLWithPath: dump))
        // nm -D prints versioned names (`__vdso_time@@LINUX_2.6`); aliases share an address.
        var namesByValue: [UInt: Set<String>] = [:]
        for line in try NativeScratch.run("/usr/bin/nm", ["-D", "--defined-only", dump]).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, ["T", "W", "i"].contains(fields[1]), let value = UInt(fields[0], radix: 16) else { continue }
            namesByValue[value, default: []].insert(String(fields[2].split(separator: "@")[0]))
        }
        #expect(!namesByValue.isEmpty)
        let symbolizer = Symbolizer(modules: map)
        for (value, names) in namesByValue {
            let frame = symbolizer.symbolize(region.start + value)
            #expect(names.contains(frame.name), "\(frame.name) not in \(names)")
            #expect(frame.isResolved && frame.kind == .native && frame.moduleOffset == value)
        }
    }
}
