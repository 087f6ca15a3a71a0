import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Source lines and inlined calls from DWARF (`SymbolOptions.resolvesLines`), checked
    /// against `addr2line -i -f` on every byte of a function with an inlined helper.
    @Suite(.serialized) struct SourceLines {
        static let source = """
            static inline __attribute__((always_inline)) unsigned long inner_helper(unsigned long x) {
                for (int i = 0; i < 1000; i++) x = (x * 6364136223846793005UL + 1442695040888963407UL) ^ (x >> 7);
                return x;
            }
            __attribute__((noinline)) unsigned long hot_function(unsigned long x) {
                x += 3;
                x = inner_helper(x);
                return x * 7;
            }
            """

        /// `name`, `file:line` per frame, innermost first, as addr2line prints them.
        typealias Chain = [String]

        /// Symbolizes every address of `hot_function` in `library` (dlopened), with `options`.
        static func frames(in library: String, options: SymbolOptions) throws -> [SymbolizedFrame] {
            let handle = try #require(dlopen(library, RTLD_NOW | RTLD_LOCAL), "dlopen \(library)")
            defer { dlclose(handle) }
            let start = UInt(bitPattern: dlsym(handle, "hot_function"))
            try #require(start != 0, "no hot_function in \(library)")
            let symbolizer = Symbolizer(modules: .current(), options: options)
            var frames: [SymbolizedFrame] = []
            var address = start
            while frames.count < 4096 {
                let frame = symbolizer.symbolize(address)
                guard frame.name == "hot_function" else { break }
                frames.append(frame)
                address += 1
            }
            return frames
        }

        /// The chain of each frame as our symbolizer gives it, innermost first: `name`, `file:line` pairs.
        static func chain(of frame: SymbolizedFrame) -> Chain {
            let shown = frame.inlined.reversed().map { ($0.name, $0.location) } + [(frame.name, frame.location)]
            return shown.flatMap { [$0.0, $0.1.map { "\($0)" } ?? "??:0"] }
        }

        /// addr2line's chains for ELF vaddrs `vaddrs` of `binary`.
        static func addr2line(_ binary: String, _ vaddrs: [UInt]) throws -> [Chain] {
            let output = try NativeScratch.run("/usr/bin/addr2line", ["-a", "-i", "-f", "-e", binary] + vaddrs.map { "0x" + String($0, radix: 16) })
            var chains: [Chain] = []
            for line in output.split(separator: "\n") {
                if line.hasPrefix("0x") { chains.append([]); continue }
                // "file:line (discriminator N)" → "file:line"
                chains[chains.count - 1].append(String(line.split(separator: " ").first ?? line))
            }
            return chains
        }

        @Test("with lines: hot_function then inner_helper, names and file:line as addr2line -i -f gives them")
        func inlinedChainMatchesAddr2line() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let library = try scratch.compile(Self.source, name: "liblines.so", flags: ["-O2", "-g", "-shared", "-fPIC"])
            let frames = try Self.frames(in: library, options: SymbolOptions(resolvesLines: true))
            try #require(frames.count > 8, "hot_function has \(frames.count) bytes")
            let inlined = frames.filter { !$0.inlined.isEmpty }
            #expect(inlined.count > frames.count / 4, "only \(inlined.count) of \(frames.count) addresses have inlined calls")
            #expect(inlined.allSatisfy { $0.inlined.map(\.name) == ["inner_helper"] }, "\(inlined.map(\.inlined))")
            #expect(frames.allSatisfy { $0.location?.file == library.replacingOccurrences(of: ".so", with: ".so.c") })

            let expected = try Self.addr2line(library, frames.map { $0.moduleOffset! })
            try #require(expected.count == frames.count)
            let known = zip(frames, expected).filter { !$0.1.contains { $0.hasPrefix("??") || $0.hasSuffix(":?") } }
            #expect(known.count > frames.count * 3 / 4, "addr2line knows only \(known.count) of \(frames.count) addresses")
            for (frame, theirs) in known {
                #expect(Self.chain(of: frame) == theirs, "at 0x\(String(frame.moduleOffset!, radix: 16))")
            }
        }

        @Test("without lines: no location and no inlined calls")
        func offByDefault() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let library = try scratch.compile(Self.source, name: "liblinesoff.so", flags: ["-O2", "-g", "-shared", "-fPIC"])
            let frames = try Self.frames(in: library, options: SymbolOptions())
            try #require(frames.count > 8)
            #expect(frames.allSatisfy { $0.inlined.isEmpty && $0.location == nil })
        }

        @Test("stripped, with and without a debug file: plain names without DWARF, lines through the debuglink")
        func strippedAndDebugFile() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let full = try scratch.compile(Self.source, name: "liblinesfull.so", flags: ["-O2", "-g", "-shared", "-fPIC"])
            let bare = try scratch.stripped(full, as: "liblinesbare.so")
            let bareFrames = try Self.frames(in: bare, options: SymbolOptions(resolvesLines: true))
            try #require(bareFrames.count > 8)
            #expect(bareFrames.allSatisfy { $0.inlined.isEmpty && $0.location == nil })

            let debug = scratch.path("liblineslinked.debug")
            try NativeScratch.run("/usr/bin/objcopy", ["--only-keep-debug", full, debug])
            let linked = try scratch.stripped(full, as: "liblineslinked.so")
            try NativeScratch.run("/usr/bin/objcopy", ["--add-gnu-debuglink=\(debug)", linked])
            let linkedFrames = try Self.frames(in: linked, options: SymbolOptions(debugRoot: scratch.path("none"), resolvesLines: true))
            let fullFrames = try Self.frames(in: full, options: SymbolOptions(resolvesLines: true))
            #expect(linkedFrames.contains { !$0.inlined.isEmpty }, "no inlined calls found through the debuglink")
            #expect(linkedFrames.map(Self.chain(of:)) == fullFrames.map(Self.chain(of:)))
        }
    }
}
