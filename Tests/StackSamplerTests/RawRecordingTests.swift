import Foundation
import Testing
@testable import StackSampler

/// A recording made by the real writer: two threads, three stacks (one whole, one ended early at
/// a frame without unwind info, one cut at the maximum depth), five samples.
private func writtenRecording() throws -> [UInt8] {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("raw-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let writer = try RawStreamWriter(path: path)
    writer.begin(configuration: ProfilerConfiguration(period: .milliseconds(5), mode: .wall, maxDepth: 64), startNanoseconds: 1_000)
    let threads = [
        ThreadRecord(tid: 41, name: "main", samples: 3, firstCPU: 0, lastCPU: 30_000_000, firstSeen: 1_000, lastSeen: 9_000),
        ThreadRecord(tid: 42, name: "worker;2", samples: 2, firstCPU: 0, lastCPU: 20_000_000, firstSeen: 2_000, lastSeen: 8_000),
    ]
    let a = StackAggregator.StackKey(thread: 0, frames: [0x30, 0x20, 0x10], cut: nil)
    let b = StackAggregator.StackKey(thread: 0, frames: [0x40, 0x10], cut: .noUnwindInfo)
    let c = StackAggregator.StackKey(thread: 1, frames: [0x50], cut: .depth)
    for (key, time) in [(a, UInt64(2_000)), (b, 3_000), (a, 4_000)] {
        writer.repeatLast(key, at: time, times: 1, spacing: 0, threads: threads)
    }
    // Two wall ticks of a thread that did not move, counted in one step: each at its own time.
    writer.repeatLast(c, at: 6_000, times: 2, spacing: 1_000, threads: threads)
    var losses = Profile.Losses()
    losses.droppedSamples = 7
    writer.finish(durationNanoseconds: 10_000, threads: threads, losses: losses)
    return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
}

@Suite struct RawRecordingTests {
    @Test("a recording reads back the header, threads, samples, stacks, losses, duration and maps that the writer streamed")
    func roundTripsEverythingTheWriterStreams() throws {
        let recording = try RawRecording(bytes: try writtenRecording())
        #expect(recording.header.mode == .wall)
        #expect(recording.header.periodNanoseconds == 5_000_000)
        #expect(recording.header.maxDepth == 64)
        #expect(recording.header.processID == getpid())
        #expect(recording.threads.values.map(\.name).sorted() == ["main", "worker;2"])
        #expect(recording.samples.map(\.timeNanoseconds) == [2_000, 3_000, 4_000, 5_000, 6_000])
        #expect(recording.stacks.count == 3)
        let cuts: [[UInt]: Profile.StackCut?] = Dictionary(uniqueKeysWithValues: recording.stacks.values.map { ($0.addresses, $0.cut) })
        #expect(cuts == [[0x30, 0x20, 0x10]: nil, [0x40, 0x10]: .noUnwindInfo, [0x50]: .depth])
        #expect(recording.losses.droppedSamples == 7)
        #expect(recording.durationNanoseconds == 10_000)
        #expect(!recording.mapsText.isEmpty && !recording.modules.isEmpty)
    }

    @Test("a profile from a recording counts every sample once, by thread and stack")
    func profileFromRecordingCountsEveryStack() throws {
        let (profile, warnings) = Profile.fromRecording(try RawRecording(bytes: try writtenRecording()))
        #expect(warnings.isEmpty)
        #expect(profile.sampleCount == 5)
        #expect(Set(profile.stacks.map(\.count)) == [2, 1])
        let worker = try #require(profile.threads.firstIndex { $0.id == 42 })
        #expect(profile.stacks.filter { $0.thread == worker }.map(\.addresses) == [[0x50]])
        #expect(profile.stacks.first { $0.count == 2 && $0.thread != worker }?.addresses == [0x10, 0x20, 0x30])
    }

    @Test("a damaged recording is refused with the byte offset and what is wrong: empty, not a recording, a checksum mismatch, truncated")
    func namesWhereTheDamageIs() throws {
        let bytes = try writtenRecording()
        #expect(throws: RawFormatError(offset: 0, problem: "the file is empty")) { try RawRecording(bytes: []) }
        #expect(throws: RawFormatError(offset: 0, problem: "the file does not start with STKSMPL1")) {
            try RawRecording(bytes: Array("not a recording".utf8))
        }
        var flipped = bytes
        flipped[20] ^= 0x40  // inside the header record's payload
        #expect(throws: RawFormatError(offset: 8, problem: "the header record is damaged (checksum mismatch)")) {
            try RawRecording(bytes: flipped)
        }
        let cut = Array(bytes.dropLast(3))
        let error = #expect(throws: RawFormatError.self) { try RawRecording(bytes: cut) }
        #expect(error?.problem == "the file ends inside a record (truncated)")
        #expect(error.map { $0.description.contains("at byte \($0.offset)") } == true)
    }

    @Test("a stack record's flags are 0 for a whole stack, else one cut's bit (1 at the maximum depth, as older writers wrote); another value is refused")
    func stackFlagsAreOneCutBit() throws {
        #expect(Profile.StackCut.allCases.map(\.rawValue) == [1, 2, 4, 8])
        var bytes = try writtenRecording()
        // The first stack record: after the magic, records of kind u8, length u32, payload, crc u32.
        var offset = RawFormat.magic.count
        func length(at offset: Int) -> Int { (1...4).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * ($1 - 1)) } }
        while bytes[offset] != RawFormat.Kind.stack.rawValue { offset += 9 + length(at: offset) }
        let payload = length(at: offset)
        bytes[offset + 5 + 8] = 3  // the flags byte, after the stack id and thread index
        let crc = CRC32.checksum(bytes[offset..<(offset + 5 + payload)])
        for index in 0..<4 { bytes[offset + 5 + payload + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
        let error = #expect(throws: RawFormatError.self) { try RawRecording(bytes: bytes) }
        #expect(error?.problem.contains("unknown stack flags 3") == true, "\(String(describing: error))")
    }

    @Test("told to tolerate a truncated tail, the reader keeps every sample before the cut and reports the tail, with no duration from the lost end record")
    func aTruncatedTailIsToleratedOnlyWhenAsked() throws {
        let bytes = try writtenRecording()
        let cut = Array(bytes.dropLast(3))
        let recording = try RawRecording(bytes: cut, toleratingTruncatedTail: true)
        #expect(recording.truncatedTail != nil)
        #expect(recording.durationNanoseconds == nil, "the end record was the one cut")
        #expect(recording.samples.count == 5)
    }

    /// Random damage never crashes the reader: every input either reads or throws RawFormatError.
    @Test("3000 rounds of random and mutated input each read or throw a format error, and more than a third are noticed as damaged")
    func survivesRandomAndMutatedInput() throws {
        let valid = try writtenRecording()
        var generator = SeededGenerator(seed: 0x5EED)
        var read = 0, rejected = 0
        for round in 0..<3000 {
            var bytes = valid
            switch round % 4 {
            case 0:
                for _ in 0..<Int.random(in: 1...8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
            case 2:
                let start = Int.random(in: 8..<bytes.count, using: &generator)
                bytes.insert(contentsOf: (0..<Int.random(in: 1...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }, at: start)
            default:
                bytes = RawFormat.magic + (0..<Int.random(in: 0...512, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            do {
                _ = try RawRecording(bytes: bytes, toleratingTruncatedTail: round % 2 == 0)
                read += 1
            } catch {
                rejected += 1
            }
        }
        #expect(read + rejected == 3000)
        #expect(rejected > 1000, "damage is noticed, not read as something else")
    }
}

/// A small deterministic generator (SplitMix64) so the fuzz rounds are the same every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
