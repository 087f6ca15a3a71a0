import Foundation
import Testing
@testable import StackSampler

/// Every exporter shows the calls inlined at an address as frames between its function and
/// the next address; pprof as extra lines of the address's location.
@Suite struct InlinedFramesExportTests {
    /// main → hot_function, which at 0x20 runs `inner` inlined into `middle` inlined into it, and at 0x28 runs its own code.
    private func profile() -> Profile {
        var inlinedAt = SymbolizedFrame(name: "hot_function", modulePath: "/bin/app", moduleOffset: 0x20, kind: .native, isResolved: true)
        inlinedAt.location = SourceLocation(file: "/src/a.c", line: 10)
        inlinedAt.inlined = [InlinedFrame(name: "middle", location: SourceLocation(file: "/src/a.c", line: 20)),
                             InlinedFrame(name: "inner", location: SourceLocation(file: "/src/b.h", line: 30))]
        var plain = SymbolizedFrame(name: "hot_function", modulePath: "/bin/app", moduleOffset: 0x28, kind: .native, isResolved: true)
        plain.location = SourceLocation(file: "/src/a.c", line: 12)
        let frames: [UInt: SymbolizedFrame] = [
            0x10: SymbolizedFrame(name: "main", modulePath: "/bin/app", moduleOffset: 0x10, kind: .native, isResolved: true),
            0x20: inlinedAt,
            0x28: plain,
        ]
        let threads = [Profile.Thread(id: 100, name: "main", samples: 7, cpuNanoseconds: 70_000_000, observedNanoseconds: 70_000_000)]
        let stacks = [
            Profile.Stack(thread: 0, addresses: [0x10, 0x20], count: 5),
            Profile.Stack(thread: 0, addresses: [0x10, 0x28], count: 2),
        ]
        return Profile(configuration: ProfilerConfiguration(), startNanoseconds: 0, durationNanoseconds: 70_000_000,
                       signal: "SIGPROF", signalSubstituted: false, stacks: stacks, threads: threads, frames: frames,
                       modules: [Module(path: "/bin/app", start: 0, end: 0x1000, fileOffset: 0, buildID: nil)], losses: Profile.Losses())
    }

    @Test("folded and SVG output name inlined calls with the [i] marker, innermost last")
    func foldedAndSVGNameInlinedCallsWithTheIMarkerInnermostLast() {
        let folded = String(decoding: profile().rendered(as: .folded), as: UTF8.self).split(separator: "\n")
        #expect(folded == ["main;hot_function 2", "main;hot_function;middle_[i];inner_[i] 5"])
        let svg = String(decoding: profile().rendered(as: .svg), as: UTF8.self)
        #expect(svg.contains("inner_[i]") && svg.contains("middle_[i]"))
    }

    @Test("pprof has one location per address, its inlined calls as lines innermost first, with their files and line numbers")
    func pprofHasOneLocationPerAddressWithItsInlinedCallsAsLinesInnermostFirst() throws {
        let decoded = try DecodedPprof(gzipped: profile().rendered(as: .pprof))
        #expect(decoded.foldedStacks() == ["main;hot_function;middle;inner": 5, "main;hot_function": 2])
        let location = try #require(decoded.locations.values.first { $0.address == 0x20 })
        #expect(location.functionIDs.map { decoded.functionNames[$0] } == ["inner", "middle", "hot_function"])
        #expect(location.functionIDs.map { decoded.functionFiles[$0] } == ["/src/b.h", "/src/a.c", "/src/a.c"])
        #expect(location.lineNumbers == [30, 20, 10])
        #expect(decoded.locations.count == 3, "inlined calls must not become locations of their own")
    }

    @Test("speedscope frames carry their source file")
    func speedscopeFramesCarryTheirSourceFile() throws {
        let json = try #require(JSONSerialization.jsonObject(with: Data(profile().rendered(as: .speedscope))) as? [String: Any])
        let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        let files = Dictionary(uniqueKeysWithValues: frames.map { ($0["name"] as? String ?? "", $0["file"] as? String) })
        #expect(files["inner_[i]"] == "/src/b.h")
        #expect(files["hot_function"] == "/src/a.c")
    }
}
