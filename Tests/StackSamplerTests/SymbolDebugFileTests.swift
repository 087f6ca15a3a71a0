import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Names of stripped code from separate debug files (build id, debuglink) and MiniDebugInfo.
    @Suite(.serialized) struct DebugFiles {
        static let functions = ["ss_alpha", "ss_beta", "ss_gamma"]

        /// Loads `library` and names an address a few bytes into each static function of
        /// `Unwind.source`, with debug files looked up under `root`.
        static func names(in library: String, root: String) throws -> [String] {
            let handle = try #require(dlopen(library, RTLD_NOW | RTLD_LOCAL), "dlopen \(library)")
            defer { dlclose(handle) }
            let table = try #require(dlsym(handle, "ss_addresses")).assumingMemoryBound(to: UInt.self)
            let symbolizer = Symbolizer(modules: .current(), options: SymbolOptions(debugRoot: root))
            return functions.indices.map { symbolizer.symbolize(table[$0] + 3).name }
        }

        /// `basename+0xSTART` for each function, START from `nm` of the unstripped `library`.
        static func unresolvedNames(_ library: String, as basename: String) throws -> [String] {
            let nm = try NativeScratch.nmValues(library)
            return try functions.map { "\(basename)+0x\(String(try #require(nm[$0]), radix: 16))" }
        }

        /// A library built with `-g` and `linkFlags`, its debug file and a stripped copy.
        struct Build {
            let scratch: NativeScratch
            let full: String
            let debug: String

            init(_ scratch: NativeScratch, linkFlags: [String]) throws {
                self.scratch = scratch
                full = try scratch.compile(Unwind.source, name: "libssdebug.so", flags: ["-O2", "-g", "-shared", "-fPIC"] + linkFlags)
                debug = scratch.path("libssdebug.debug")
                try NativeScratch.run("/usr/bin/objcopy", ["--only-keep-debug", full, debug])
            }

            /// A stripped copy at `relativePath` (directories created), with a debuglink to the debug file if asked.
            func stripped(_ relativePath: String, debugLink: Bool) throws -> String {
                let path = scratch.path(relativePath)
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                try NativeScratch.run("/usr/bin/strip", ["--strip-unneeded", "-o", path, full])
                if debugLink {
                    // objcopy records the debug file's basename and CRC; it must find the file to compute it.
                    try NativeScratch.run("/usr/bin/objcopy", ["--add-gnu-debuglink=\(debug)", path])
                }
                return path
            }

            /// Copies the debug file to `relativePath`.
            func placeDebug(at relativePath: String, from source: String? = nil) throws {
                let path = scratch.path(relativePath)
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: source ?? debug, toPath: path)
            }
        }

        @Test("a debug file in the debug root's .build-id directory names a stripped library's functions; without it they are named after their start")
        func buildIDDirectoryUnderTheDebugRoot() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let build = try Build(scratch, linkFlags: ["-Wl,--build-id"])
            let buildID = try #require(try NativeScratch.readelfBuildID(build.full))
            let library = try build.stripped("bin/libssdebug.so", debugLink: false)
            let unresolved = try Self.unresolvedNames(build.full, as: "libssdebug.so")
            // No debug file yet: named by function start, one name per function.
            #expect(try Self.names(in: library, root: scratch.path("root")) == unresolved)
            try build.placeDebug(at: "root/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug")
            #expect(try Self.names(in: library, root: scratch.path("root")) == Self.functions)
        }

        @Test("a debug file filed under the build id but from another build is not used")
        func buildIDMismatchIsRejected() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let build = try Build(scratch, linkFlags: ["-Wl,--build-id"])
            let buildID = try #require(try NativeScratch.readelfBuildID(build.full))
            // A debug file of another build of the same code, filed under this build's id.
            let other = try scratch.compile(Unwind.source + "\nint ss_other = 1;\n", name: "libssother.so",
                                            flags: ["-O0", "-g", "-shared", "-fPIC", "-Wl,--build-id"])
            let library = try build.stripped("bin/libssdebug.so", debugLink: false)
            try build.placeDebug(at: "root/.build-id/\(buildID.prefix(2))/\(buildID.dropFirst(2)).debug", from: other)
            #expect(try Self.names(in: library, root: scratch.path("root"))
                == Self.unresolvedNames(build.full, as: "libssdebug.so"))
        }

        @Test("debuglink: next to the module, in .debug/, under the debug root; CRC checked",
              arguments: ["same", "subdirectory", "root"])
        func debugLinkLocations(location: String) throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            // No build id: the CRC is what ties the debug file to the module.
            let build = try Build(scratch, linkFlags: ["-Wl,--build-id=none"])
            let library = try build.stripped("lib/libssdebug.so", debugLink: true)
            let root = scratch.path("root")
            let libraryDirectory = scratch.path("lib")
            switch location {
            case "same": try build.placeDebug(at: "lib/libssdebug.debug")
            case "subdirectory": try build.placeDebug(at: "lib/.debug/libssdebug.debug")
            default: try build.placeDebug(at: "root" + libraryDirectory + "/libssdebug.debug")
            }
            #expect(try Self.names(in: library, root: root) == Self.functions)
        }

        @Test("a debuglink file with the right name but a wrong CRC is not used")
        func debugLinkWithAWrongCRCIsRejected() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let build = try Build(scratch, linkFlags: ["-Wl,--build-id=none"])
            let library = try build.stripped("lib/libssdebug.so", debugLink: true)
            // Same name, different contents.
            let other = try scratch.compile(Unwind.source, name: "libssother.so",
                                            flags: ["-O1", "-g", "-shared", "-fPIC", "-Wl,--build-id=none"])
            try build.placeDebug(at: "lib/libssdebug.debug", from: other)
            #expect(try Self.names(in: library, root: scratch.path("root"))
                == Self.unresolvedNames(build.full, as: "libssdebug.so"))
        }

        @Test("MiniDebugInfo in .gnu_debugdata names a stripped library's functions")
        func miniDebugInfoInGnuDebugdata() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let build = try Build(scratch, linkFlags: [])
            // The MiniDebugInfo recipe: the symbol table without debug sections, xz-compressed,
            // added as .gnu_debugdata to the stripped file.
            let mini = scratch.path("mini.elf")
            try NativeScratch.run("/usr/bin/objcopy", ["--strip-debug", build.debug, mini])
            try NativeScratch.run("/usr/bin/xz", ["-k", mini])
            let library = try build.stripped("lib/libssmini.so", debugLink: false)
            try NativeScratch.run("/usr/bin/objcopy", ["--add-section", ".gnu_debugdata=\(mini).xz", library])
            #expect(try Self.names(in: library, root: scratch.path("root")) == Self.functions)
        }
    }
}
