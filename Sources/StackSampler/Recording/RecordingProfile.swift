extension Profile {
    /// A profile from a raw recording, named through the files on this machine now, and
    /// warnings where that may be wrong (changed build ids, a recording cut short).
    package static func fromRecording(_ recording: RawRecording, symbols: SymbolOptions = SymbolOptions())
        -> (profile: Profile, warnings: [String]) {
        ProfileBuilder.build(from: recording, symbols: symbols)
    }
}

extension RawRecording {
    /// Whether `bytes` start like a raw recording (as opposed to, say, collapsed stacks).
    package static func isRecording(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: RawFormat.magic)
    }

    /// Reads the recording at `path` (see `init(bytes:toleratingTruncatedTail:)`).
    package init(contentsOf path: String, toleratingTruncatedTail: Bool = false) throws(RawFormatError) {
        guard let bytes = FileIO.readBytes(path) else {
            throw RawFormatError(offset: 0, problem: "\(path) cannot be read")
        }
        try self.init(bytes: bytes, toleratingTruncatedTail: toleratingTruncatedTail)
    }
}

extension ProfileBuilder {
    /// A profile from a raw recording, named through the files on this machine now.
    /// The warnings say where that may be wrong: a module whose build id differs from
    /// the one recorded (rebuilt or upgraded since), a recording cut short.
    static func build(from recording: RawRecording, symbols: SymbolOptions) -> (profile: Profile, warnings: [String]) {
        var counts: [Int: Int] = [:]
        for sample in recording.samples { counts[sample.stack, default: 0] += 1 }
        let indices = recording.threads.keys.sorted()
        let position = Dictionary(uniqueKeysWithValues: indices.enumerated().map { ($1, $0) })
        let stacks = counts.compactMap { id, count -> Profile.Stack? in
            guard let stack = recording.stacks[id], let thread = position[stack.thread] else { return nil }
            return Profile.Stack(thread: thread, addresses: stack.addresses.reversed(), count: count, cut: stack.cut)
        }
        var samplesPerThread: [Int: Int] = [:]
        for stack in stacks { samplesPerThread[stack.thread, default: 0] += stack.count }
        let start = recording.header.startNanoseconds
        let threads = indices.enumerated().map { position, index in
            let thread = recording.threads[index]!
            let samples = samplesPerThread[position] ?? 0
            return Profile.Thread(id: thread.tid, name: thread.name, samples: samples,
                                  cpuNanoseconds: thread.cpuNanoseconds,
                                  observedNanoseconds: thread.lastSeenNanoseconds &- max(thread.firstSeenNanoseconds, start),
                                  takenSamples: samples, takenWeightSquares: samples)
        }
        let lastSample = recording.samples.last?.timeNanoseconds ?? start
        var configuration = ProfilerConfiguration(mode: recording.header.mode, maxDepth: max(1, recording.header.maxDepth))
        configuration.period = .nanoseconds(Int64(clamping: recording.header.periodNanoseconds))
        let counted = Counted(configuration: configuration, startNanoseconds: start,
                              durationNanoseconds: recording.durationNanoseconds ?? (lastSample &- start),
                              signalNumber: recording.header.signalNumber, signalSubstituted: recording.header.signalSubstituted,
                              processID: recording.header.processID, processName: recording.header.processName,
                              stacks: stacks, threads: threads, losses: recording.losses)
        let (profile, _) = named(counted, with: Symbolizer(modules: ModuleMap(mapsText: recording.mapsText), options: symbols))
        var warnings: [String] = []
        let current = Dictionary(profile.modules.map { ($0.path, $0.buildID) }, uniquingKeysWith: { first, _ in first })
        for recorded in recording.modules {
            guard let recordedID = recorded.buildID, let now = current[recorded.path] else { continue }
            if now != recordedID {
                warnings.append("\(recorded.path) has changed since it was recorded (build id \(recordedID), now \(now ?? "none")); its names may be wrong")
            }
        }
        if let tail = recording.truncatedTail {
            warnings.append("the recording ends inside a record at byte \(tail.offset) (the program was stopped while writing); the samples before it are used")
        }
        return (profile, warnings)
    }
}
