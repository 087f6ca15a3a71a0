import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Parsing `/proc/<pid>/maps` text into modules and file-less regions.
    @Suite struct Maps {
        static let text = """
        55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 131 /opt/app/bin/server
        55d0c0a01000-55d0c0a05000 r-xp 00001000 08:01 131 /opt/app/bin/server
        55d0c0a05000-55d0c0a06000 rw-p 00005000 08:01 131 /opt/app/bin/server
        7f00aa000000-7f00aa100000 r-xp 00028000 08:01 77   /opt/app/lib/lib with space.so.5
        7f00ab000000-7f00ab001000 r-xp 00000000 00:00 0
        7f00ac000000-7f00ac010000 r-xp 00002000 08:01 78   /opt/app/lib/libgone.so (deleted)
        not a maps line
        7ffc11fe0000-7ffc11fe2000 r-xp 00000000 00:00 0                          [vdso]
        """

        @Test("only file-backed executable mappings are modules, with their bounds, file offsets and names with spaces or (deleted)")
        func keepsFileBackedExecutableMappingsOnly() {
            let map = ModuleMap(mapsText: Self.text)
            #expect(map.modules.map(\.path) == [
                "/opt/app/bin/server", "/opt/app/lib/lib with space.so.5", "/opt/app/lib/libgone.so (deleted)",
            ])
            let server = map.modules[0]
            #expect(server.start == 0x55d0c0a01000 && server.end == 0x55d0c0a05000 && server.fileOffset == 0x1000)
            #expect(server.buildID == nil)  // Not read yet; and the file does not exist here:
            #expect(map.modulesWithBuildIDs()[0].buildID == nil)
            #expect(map.modules[1].basename == "lib with space.so.5")
            #expect(map.modules[1].fileOffset == 0x28000)
        }

        @Test("an address finds the executable mapping that holds it, and none outside")
        func findsTheModuleContainingAnAddress() {
            let map = ModuleMap(mapsText: Self.text)
            #expect(map.module(containing: 0x55d0c0a01000)?.path == "/opt/app/bin/server")
            #expect(map.module(containing: 0x55d0c0a04fff)?.path == "/opt/app/bin/server")
            #expect(map.module(containing: 0x55d0c0a05000) == nil)  // Data mapping, not executable.
            #expect(map.module(containing: 0x7f00aa0fffff)?.basename == "lib with space.so.5")
            #expect(map.module(containing: 0x1000) == nil)
        }

        @Test("addresses outside readable modules are named after the module and offset, [vdso], [anon] or [unknown]")
        func namesAddressesOutsideReadableModules() {
            let symbolizer = Symbolizer(modules: ModuleMap(mapsText: Self.text))
            // Unreadable file: offset through the mapping's file offset, named after the module.
            let missing = symbolizer.symbolize(0x7f00aa000010)
            #expect(missing.name == "lib with space.so.5+0x28010")
            #expect(missing.moduleOffset == 0x28010 && !missing.isResolved && missing.kind == .unknown)
            #expect(symbolizer.symbolize(0x7ffc11fe0123).name == "[vdso]+0x123")
            #expect(symbolizer.symbolize(0x7f00ab000040).name == "[anon]+0x7f00ab000040")
            let nowhere = symbolizer.symbolize(0x10)
            #expect(nowhere.name == "[unknown]" && nowhere.modulePath == nil && nowhere.kind == .unknown)
        }

        @Test("this process's map finds libc holding getpid, with the build id readelf gives, read only when asked for")
        func currentProcessMapFindsLibcWithItsBuildID() throws {
            let map = ModuleMap.current()
            let getpidAddress = try #require(dlsym(nil, "getpid"))
            #expect(map.module(containing: UInt(bitPattern: getpidAddress))?.buildID == nil)  // not read yet
            let held = map.modules(holding: [UInt(bitPattern: getpidAddress)])
            #expect(held.count == 1)
            let libc = try #require(held.first)
            #expect(libc.basename.hasPrefix("libc.so"))
            #expect(libc.buildID != nil)
            #expect(libc.buildID == (try NativeScratch.readelfBuildID(libc.path)))
        }
    }
}
