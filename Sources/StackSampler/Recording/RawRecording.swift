/// A raw recording read back: what a profiled process streamed (see `RawFormat`).
package struct RawRecording: Sendable {
    /// The session as the process started it.
    package struct Header: Sendable, Equatable {
        package var mode: SamplingMode
        package var periodNanoseconds: UInt64
        package var maxDepth: Int
        package var processID: Int32
        package var startNanoseconds: UInt64
        package var processName: String
        package var signalNumber: Int32
        package var signalSubstituted: Bool
    }

    /// A module as the process had it mapped, with the build id it had then.
    package struct RecordedModule: Sendable, Equatable {
        package var path: String
        package var buildID: String?
    }

    /// A thread, with its figures as last streamed.
    package struct RecordedThread: Sendable, Equatable {
        package var tid: Int32
        package var name: String
        package var cpuNanoseconds: UInt64
        package var firstSeenNanoseconds: UInt64
        package var lastSeenNanoseconds: UInt64
    }

    /// A unique stack of one thread; addresses leaf first.
    package struct RecordedStack: Sendable, Equatable {
        package var thread: Int
        package var cut: Profile.StackCut?
        package var addresses: [UInt]
    }

    /// One sample: which stack, when.
    package struct Sample: Sendable, Equatable {
        package var stack: Int
        package var timeNanoseconds: UInt64
    }

    package var header: Header
    /// `/proc/self/maps` of the process (the latest streamed).
    package var mapsText = ""
    /// Its modules' build ids (the latest streamed).
    package var modules: [RecordedModule] = []
    /// Threads by index.
    package var threads: [Int: RecordedThread] = [:]
    /// Stacks by id.
    package var stacks: [Int: RecordedStack] = [:]
    /// Every sample, in the order taken.
    package var samples: [Sample] = []
    /// Losses as last streamed.
    package var losses = Profile.Losses()
    /// Length of the session, when the process ended it normally; nil if it was cut short.
    package var durationNanoseconds: UInt64?
    /// Where the file ended inside a record (a process killed while writing), when tolerated.
    package var truncatedTail: RawFormatError?

    /// Reads a recording. A file that ends inside its last record is accepted only with
    /// `toleratingTruncatedTail` (what a killed process leaves); any other damage throws,
    /// naming the byte offset.
    package init(bytes: [UInt8], toleratingTruncatedTail: Bool = false) throws(RawFormatError) {
        guard bytes.count >= RawFormat.magic.count, Array(bytes.prefix(RawFormat.magic.count)) == RawFormat.magic else {
            throw RawFormatError(offset: 0, problem: bytes.isEmpty ? "the file is empty" : "the file does not start with STKSMPL1")
        }
        var offset = RawFormat.magic.count
        var header: Header?
        var recording: RawRecording?
        while offset < bytes.count {
            let start = offset
            guard bytes.count - offset >= 5 else {
                try Self.cut(at: start, tolerate: toleratingTruncatedTail, into: &recording)
                break
            }
            var framing = RawDecoder(bytes[offset..<offset + 5], fileOffset: offset)
            let kindByte = try framing.u8()
            let length = Int(try framing.u32())
            guard let kind = RawFormat.Kind(rawValue: kindByte) else {
                throw RawFormatError(offset: start, problem: "unknown record kind \(kindByte)")
            }
            guard length <= RawFormat.maximumPayload else {
                throw RawFormatError(offset: start + 1, problem: "a record claims \(length) bytes, more than \(RawFormat.maximumPayload)")
            }
            let end = offset + 5 + length + 4
            guard end <= bytes.count else {
                try Self.cut(at: start, tolerate: toleratingTruncatedTail, into: &recording)
                break
            }
            var crcReader = RawDecoder(bytes[(end - 4)..<end], fileOffset: end - 4)
            guard try crcReader.u32() == CRC32.checksum(bytes[start..<(end - 4)]) else {
                throw RawFormatError(offset: start, problem: "the \(kind) record is damaged (checksum mismatch)")
            }
            var payload = RawDecoder(bytes[(offset + 5)..<(end - 4)], fileOffset: offset + 5)
            if kind == .header {
                guard header == nil else { throw RawFormatError(offset: start, problem: "a second header") }
                header = try Self.readHeader(&payload)
                recording = RawRecording(header: header!)
            } else {
                guard recording != nil else { throw RawFormatError(offset: start, problem: "a \(kind) record before the header") }
                try recording!.apply(kind, &payload)
            }
            guard payload.isAtEnd else { throw payload.error("\(payload.remaining) unread bytes at the end of a \(kind) record") }
            offset = end
        }
        guard let result = recording else { throw RawFormatError(offset: offset, problem: "no header record") }
        self = result
    }

    private init(header: Header) {
        self.header = header
    }

    private static func cut(at offset: Int, tolerate: Bool, into recording: inout RawRecording?) throws(RawFormatError) {
        let problem = RawFormatError(offset: offset, problem: "the file ends inside a record (truncated)")
        guard tolerate, recording != nil else { throw problem }
        recording!.truncatedTail = problem
    }

    private static func readHeader(_ payload: inout RawDecoder) throws(RawFormatError) -> Header {
        let version = try payload.u16()
        guard version == RawFormat.version else { throw payload.error("format version \(version), this reader knows \(RawFormat.version)") }
        let modeByte = try payload.u8()
        guard modeByte <= 1 else { throw payload.error("unknown sampling mode \(modeByte)") }
        return Header(mode: modeByte == 0 ? .cpu : .wall, periodNanoseconds: try payload.u64(), maxDepth: Int(try payload.u32()),
                      processID: try payload.i32(), startNanoseconds: try payload.u64(), processName: try payload.string(),
                      signalNumber: Int32(try payload.u16()), signalSubstituted: try payload.u8() != 0)
    }

    private mutating func apply(_ kind: RawFormat.Kind, _ payload: inout RawDecoder) throws(RawFormatError) {
        switch kind {
        case .header: break
        case .modules:
            mapsText = try payload.string()
            let count = Int(try payload.u32())
            guard count <= payload.remaining / 8 else { throw payload.error("\(count) modules cannot fit in this record") }
            var modules: [RecordedModule] = []
            for _ in 0..<count {
                let path = try payload.string()
                let buildID = try payload.string()
                modules.append(RecordedModule(path: path, buildID: buildID.isEmpty ? nil : buildID))
            }
            self.modules = modules
        case .thread:
            let index = Int(try payload.u32())
            threads[index] = RecordedThread(tid: try payload.i32(), name: try payload.string(), cpuNanoseconds: try payload.u64(),
                                            firstSeenNanoseconds: try payload.u64(), lastSeenNanoseconds: try payload.u64())
        case .stack:
            let id = Int(try payload.u32())
            let thread = Int(try payload.u32())
            guard threads[thread] != nil else { throw payload.error("a stack of thread \(thread), which no record introduced") }
            let flags = try payload.u8()
            let depth = Int(try payload.u16())
            guard depth <= payload.remaining / 8 else { throw payload.error("a stack of \(depth) frames cannot fit in this record") }
            var addresses: [UInt] = []
            addresses.reserveCapacity(depth)
            for _ in 0..<depth { addresses.append(UInt(try payload.u64())) }
            let cut = Profile.StackCut(rawValue: flags)
            guard flags == 0 || cut != nil else { throw payload.error("unknown stack flags \(flags) (a newer writer?)") }
            stacks[id] = RecordedStack(thread: thread, cut: cut, addresses: addresses)
        case .samples:
            let count = Int(try payload.u32())
            guard count <= payload.remaining / 12 else { throw payload.error("\(count) samples cannot fit in this record") }
            for _ in 0..<count {
                let stack = Int(try payload.u32())
                guard stacks[stack] != nil else { throw payload.error("a sample of stack \(stack), which no record introduced") }
                samples.append(Sample(stack: stack, timeNanoseconds: try payload.u64()))
            }
        case .counters:
            losses = Profile.Losses(droppedSamples: Int(clamping: try payload.u64()), truncatedSamples: Int(clamping: try payload.u64()),
                                    leafOnlySamples: Int(clamping: try payload.u64()), unwindFailures: Int(clamping: try payload.u64()),
                                    unwindFaults: Int(clamping: try payload.u64()), missedTicks: Int(clamping: try payload.u64()),
                                    foreignSignals: Int(clamping: try payload.u64()))
            losses.overrunPeriods = Int(clamping: try payload.u64())
            // Recordings made before skipped ticks were counted end here.
            if payload.remaining >= 8 { losses.skippedTicks = Int(clamping: try payload.u64()) }
        case .end:
            durationNanoseconds = try payload.u64()
        }
    }
}
