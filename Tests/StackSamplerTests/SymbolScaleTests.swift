import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Symbolizing against a large binary: the first load of its tables, then lookups.
    @Suite struct Scale {
        /// The toolchain's `swift-frontend` (about 200 MB, linked by lld): the one of the toolchain
        /// whose runtime (`usr/lib/swift/linux/libswiftCore.so`) this test process runs on, else the
        /// one beside the `swift` on the PATH. A test process has one or the other wherever the suite
        /// can be built at all, so the test requires it rather than being enabled only where found.
        static let binary: String? = {
            let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
            let runtime = maps.split(separator: "\n").compactMap { $0.split(separator: " ").last }.first { $0.hasSuffix("/libswiftCore.so") }
            let toolchains = runtime.map { [URL(fileURLWithPath: String($0)).deletingLastPathComponent().path + "/../../../bin"] } ?? []
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            let besideSwift = path.split(separator: ":").map {
                URL(fileURLWithPath: String($0) + "/swift").resolvingSymlinksInPath().deletingLastPathComponent().path
            }
            for directory in toolchains + besideSwift {
                let frontend = URL(fileURLWithPath: directory + "/swift-frontend").standardizedFileURL.path
                if FileManager.default.isExecutableFile(atPath: frontend) { return frontend }
            }
            return nil
        }()

        @Test("swift-frontend's tables load once, at the first address, and resolve most random text addresses")
        func largeBinaryLoadsOnceThenResolvesRandomAddresses() throws {
            let binary = try #require(Self.binary, "no swift-frontend in the toolchain of this process's Swift runtime, nor beside the swift on the PATH")
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
