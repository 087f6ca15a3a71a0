import Testing
@testable import StackSampler
import TestSupport

@Suite struct PprofRendererTests {
    /// The hand-made profile with a module covering three of its four addresses.
    private func profileWithModule() -> Profile {
        var profile = handMadeProfile()
        profile.modules = [Module(path: "/bin/app", start: 0x8, end: 0x38, fileOffset: 0x1000, buildID: "0123abcd")]
        profile.command = "/bin/app --serve"
        return profile
    }

    @Test("pprof output is gzipped and decodes to the same stacks and counts as the folded output")
    func isGzipAndDecodesToTheFoldedStacks() throws {
        let profile = profileWithModule()
        let bytes = profile.rendered(as: .pprof)
        #expect(Array(bytes.prefix(2)) == [0x1f, 0x8b])
        let decoded = try DecodedPprof(gzipped: bytes)
        let folded = String(decoding: profile.rendered(as: .folded), as: UTF8.self).split(separator: "\n")
        let expected = Dictionary(uniqueKeysWithValues: folded.map { line in
            let space = line.lastIndex(of: " ")!
            return (String(line[..<space]), Int64(line[line.index(after: space)...])!)
        })
        #expect(decoded.foldedStacks() == expected)
    }

    @Test("the sample types, period type and period follow the mode: a count and the period's nanoseconds per sample, with the command as comment")
    func sampleTypesPeriodAndValuesFollowTheMode() throws {
        for mode in SamplingMode.allCases {
            var profile = profileWithModule()
            profile.configuration = ProfilerConfiguration(period: .milliseconds(4), mode: mode)
            let decoded = try DecodedPprof(gzipped: profile.rendered(as: .pprof))
            #expect(decoded.sampleTypes.map(\.type) == ["samples", mode.rawValue])
            #expect(decoded.sampleTypes.map(\.unit) == ["count", "nanoseconds"])
            #expect(decoded.periodType?.type == mode.rawValue)
            #expect(decoded.period == 4_000_000)
            #expect(decoded.samples.allSatisfy { $0.values.count == 2 && $0.values[1] == $0.values[0] * 4_000_000 })
            #expect(decoded.comments == ["/bin/app --serve"])
        }
    }

    @Test("each sample carries its thread's name and tid, and a truncated stack its marker")
    func samplesCarryThreadLabels() throws {
        let profile = profileWithModule()
        let decoded = try DecodedPprof(gzipped: profile.rendered(as: .pprof))
        var expected: [String: Int64] = [:]
        for stack in profile.stacks {
            let thread = profile.threads[stack.thread]
            let names = ["[\(thread.name) tid=\(thread.id)]"] + (stack.cut.map { [$0.marker] } ?? []) + stack.addresses.map(profile.name(of:))
            expected[names.joined(separator: ";"), default: 0] += Int64(stack.count)
        }
        #expect(decoded.foldedStacks(threadRoots: true) == expected)
    }

    @Test("locations in a module point to its one mapping, with its file and build id; an address outside it has no mapping")
    func locationsPointIntoTheirModulesMapping() throws {
        let profile = profileWithModule()
        let decoded = try DecodedPprof(gzipped: profile.rendered(as: .pprof))
        #expect(decoded.mappings.count == 1)
        let mapping = try #require(decoded.mappings[1])
        #expect(mapping.filename == "/bin/app" && mapping.buildID == "0123abcd" && mapping.hasFunctions)
        #expect(mapping.start == 0x8 && mapping.limit == 0x38)
        for address: UInt64 in [0x10, 0x20, 0x30, 0x40] {
            let location = try #require(decoded.locations.values.first { $0.address == address }, "no location at \(address)")
            #expect(location.mappingID == (address < 0x38 ? 1 : 0), "address \(address)")
        }
    }

    @Test("an imported profile has a sample count only and no period")
    func importedProfilesHaveOnlySampleCounts() throws {
        let profile = try Profile(collapsedStacks: "a;b 3\na;c 2", command: "x.folded")
        let decoded = try DecodedPprof(gzipped: profile.rendered(as: .pprof))
        #expect(decoded.sampleTypes.map(\.type) == ["samples"])
        #expect(decoded.periodType == nil)
        #expect(decoded.foldedStacks() == ["a;b": 3, "a;c": 2])
    }

    @Test("the protobuf reader reads back what the writer wrote: varints, negative numbers, strings, packed and nested fields; zero values are left out")
    func protobufWriterRoundTripsThroughTheReader() throws {
        var writer = ProtobufWriter()
        writer.uint(1, 300)
        writer.int(2, -2)
        writer.uint(3, 0)
        writer.string(4, "héllo")
        writer.packed(5, [1, 128, 1 << 40])
        writer.message(6) { $0.uint(1, 7) }
        let fields = try ProtobufReader.fields(writer.bytes)
        #expect(fields.map(\.field) == [1, 2, 4, 5, 6], "zero values are left out")
        #expect(fields[0].value == .varint(300))
        #expect(fields[1].value == .varint(UInt64(bitPattern: -2)))
        #expect(fields[2].value == .bytes(Array("héllo".utf8)))
        guard case .bytes(let packed) = fields[3].value, case .bytes(let nested) = fields[4].value else {
            Issue.record("packed and nested fields are not length-delimited")
            return
        }
        #expect(try ProtobufReader.varints(packed) == [1, 128, 1 << 40])
        #expect(try ProtobufReader.fields(nested).first?.value == .varint(7))
    }
}
