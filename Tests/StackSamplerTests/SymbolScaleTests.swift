import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Symbolizing against a large binary: the first load of its tables, then lookups.
    @Suite struct Scale {
        /// The toolchain's `swift-frontend` (about 200 MB, linked by lld), found beside the `swift`
        /// on the PATH that runs these tests: present wherever the suite can run at all.
        static let binary: String? = {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            for directory in path.split(separator: ":") {
                let swift = URL(fileURLWithPath: String(directory) + "/swift").resolvingSymlinksInPath()
                let frontend = swift.deletingLastPathComponent().path + "/swift-frontend"
                if FileManager.default.isExecutableFile(atPath: frontend) { return frontend }
            }
            return nil
        }()

        @Test func largeBinaryLoadsOnceThenResolvesRandomAddresses() throws {
            let binary = try #require(Self.binary, "no swift-frontend beside the swift on the PATH")
            // Map the binary's executable segment as the loader would, at a made-up base.
            let file = try #require(ElfFile(path: binary))
            let segment = try #require(file.programHeaders.first { $0.p_type == 1 /* PT_LOAD */ && $0.p_flags & 1 /* PF_X */ != 0 })
            let base: UInt = 0x5500_0000_0000
            let pageMask = ~UInt(0xfff)
            let start = base + UInt(segment.p_vaddr) & pageMask
            let end = (base + UInt(segment.p_vaddr + segment.p_memsz) + 0xfff) & pageMask
            let maps = "\(String(start, radix: 16))-\(String(end, radix: 16)) r-xp \(String(UInt(segment.p_offset) & pageMask, radix: 16)) 08:01 1 \(binary)\n"
            let symbolizer = Symbolizer(modules: ModuleMap(mapsText: maps))

            #expect(symbolizer.tableBytes == 0)  // Nothing is loaded before the first address.
            _ = symbolizer.symbolize(start + 0x1000)
            let loadedBytes = symbolizer.tableBytes
            #expect(loadedBytes > 0)
            var generator = SystemRandomNumberGenerator()
            let addresses = (0..<10_000).map { _ in UInt.random(in: (base + UInt(segment.p_vaddr))..<(base + UInt(segment.p_vaddr + segment.p_filesz)), using: &generator) }
            var resolved = 0
            for address in addresses where symbolizer.symbolize(address).isResolved { resolved += 1 }
            // Timing belongs to the benchmark; here: the tables were read once, not per lookup.
            #expect(symbolizer.tableBytes == loadedBytes, "tables grew from \(loadedBytes) to \(symbolizer.tableBytes) bytes during lookups")
            // Linked by lld, whose .eh_frame is SHT_X86_64_UNWIND: nearly every function has an FDE.
            let image = ModuleImage(file: file, path: binary, debugFiles: nil)
            #expect(image.functions.count > image.symbols.entries.count * 9 / 10,
                    "\(image.functions.count) FDEs for \(image.symbols.entries.count) functions")
            #expect(resolved > addresses.count / 2, "only \(resolved) of \(addresses.count) random text addresses resolved")
        }
    }
}
