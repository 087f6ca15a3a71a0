/// One invocation as the tracker closes it, before names are attached: 64 bytes, so the
/// default cap of a million costs 64 MB at most.
struct ClosedInvocation: Sendable, Hashable {
    /// Unique within the session, from 1.
    var id: UInt64
    /// The nearest caller kept by the depth and name filters; 0 for none.
    var parentID: UInt64
    /// The id of the root invocation of the stack it ran in.
    var traceID: UInt64
    /// The address first seen at its depth (the leaf PC, or a return address inside it); names it.
    var address: UInt
    /// Monotonic start (first sample − P/2) and duration, in ns.
    var startNanoseconds: UInt64
    var durationNanoseconds: UInt64
    /// Index of its thread among the sampler's thread records.
    var thread: Int32
    /// Frames between it and the root of its stack (0 for the root).
    var depth: Int32
    /// Samples it was seen in.
    var samples: Int32
    /// Its start or end lay among lost ticks (wall mode): it lasted at least its duration.
    var isCut: Bool
}
