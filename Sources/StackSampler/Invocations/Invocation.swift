extension Profile {
    /// One reconstructed function call: an invocation of a function seen on a thread in
    /// consecutive samples, from the same call site, at the same depth.
    ///
    /// Its times are only as fine as the period P: seen first at t₁ and last at t₂, it starts at
    /// t₁ − P/2 and lasts t₂ − t₁ + P (k·P for k consecutive samples; the truth lies between
    /// (k − 1)·P and (k + 1)·P). In cpu mode samples come only while the thread runs: a call is
    /// seen from its first to its last on-CPU sample. Two calls from one call site with no sample
    /// between them look like one call.
    public struct Invocation: Sendable, Hashable {
        /// Unique within the profile.
        public var id: UInt64
        /// The nearest caller kept by the filters, if any. It may be missing from `invocations`
        /// when the cap on kept invocations was reached before it ended.
        public var parentID: UInt64?
        /// The id of the root invocation of its stack (the thread's outermost frame), even when that one was filtered out.
        public var traceID: UInt64
        /// Index into `threads`.
        public var thread: Int
        /// The function's name (`module+0xOFFSET` when unresolved).
        public var name: String
        /// Frames between it and the root of the sampled stack (0 for the root).
        public var depth: Int
        /// Monotonic start time, in ns (the same clock as `Profile.startNanoseconds`).
        public var startNanoseconds: UInt64
        /// Duration in ns (wall-clock time).
        public var durationNanoseconds: UInt64
        /// Samples it was seen in.
        public var samples: Int
        /// Its start or end lay among ticks the sampler lost (wall mode): it lasted at least its
        /// duration, and it may be one call with the one before or after it on its thread.
        public var isCut: Bool

        /// Monotonic end time, in ns.
        public var endNanoseconds: UInt64 { startNanoseconds + durationNanoseconds }

        /// A call from its parts.
        package init(id: UInt64, parentID: UInt64?, traceID: UInt64, thread: Int, name: String, depth: Int,
                     startNanoseconds: UInt64, durationNanoseconds: UInt64, samples: Int, isCut: Bool = false) {
            self.id = id
            self.parentID = parentID
            self.traceID = traceID
            self.thread = thread
            self.name = name
            self.depth = depth
            self.startNanoseconds = startNanoseconds
            self.durationNanoseconds = durationNanoseconds
            self.samples = samples
            self.isCut = isCut
        }
    }

    /// What became of the invocations seen and of the samples used to see them.
    public struct InvocationCounts: Sendable, Hashable {
        /// Closed invocations kept.
        public var kept = 0
        /// Closed invocations left out by the filters (sample count, duration, name, depth).
        public var filtered = 0
        /// Closed invocations that passed the filters but were not kept: the cap was reached.
        public var dropped = 0
        /// Of those kept, the cut ones: a start or end among lost ticks (`Invocation.isCut`).
        public var cut = 0
        /// Lost ticks bridged, each alone between two samples (`InvocationTracker.bridgedLostTicks`):
        /// the calls open across them went on, not cut.
        public var bridgedGaps = 0
        /// Samples not used because their stack was incomplete (truncated at the maximum depth, leaf only, unwind failed).
        public var incompleteSamples = 0
        /// Stalls reported.
        public var stalls = 0
        /// Samples the tracker took, and the time it spent on them on the sampler thread, in ns
        /// (monotonic time around each sample: its cost per sample).
        public var trackedSamples = 0
        public var trackingNanoseconds: UInt64 = 0

        /// No counts yet.
        public init() {}
    }
}

extension Profile.Invocation {
    /// Named invocations from the tracker's records, ordered by thread, start and depth.
    /// Invocations of `hidden` addresses (the profiler's own thread trampoline) are left out;
    /// their callees get the trampoline's caller as parent.
    static func named(_ records: [ClosedInvocation], hidden: Set<UInt>, name: (UInt) -> String) -> [Profile.Invocation] {
        var hiddenParents: [UInt64: UInt64] = [:]
        for record in records where hidden.contains(record.address) { hiddenParents[record.id] = record.parentID }
        func visibleParent(_ id: UInt64) -> UInt64 {
            var id = id
            while let parent = hiddenParents[id] { id = parent }
            return id
        }
        return records.filter { !hidden.contains($0.address) }.map { record in
            let parent = visibleParent(record.parentID)
            return Profile.Invocation(id: record.id, parentID: parent == 0 ? nil : parent, traceID: record.traceID,
                                      thread: Int(record.thread), name: name(record.address), depth: Int(record.depth),
                                      startNanoseconds: record.startNanoseconds, durationNanoseconds: record.durationNanoseconds,
                                      samples: Int(record.samples), isCut: record.isCut)
        }.sorted { ($0.thread, $0.startNanoseconds, $0.depth) < ($1.thread, $1.startNanoseconds, $1.depth) }
    }
}
