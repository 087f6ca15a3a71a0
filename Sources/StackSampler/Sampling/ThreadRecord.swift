/// What the sampler knows of one thread of the profiled process. A tid reused by
/// a later thread gets a new record, so two threads' stacks are never mixed.
struct ThreadRecord: Sendable, Equatable {
    /// Kernel thread id.
    var tid: Int32
    /// Name from /proc (`comm`), as last read.
    var name: String
    /// Samples attributed to this thread (signalled and, in wall mode, repeated).
    var samples = 0
    /// Samples actually taken (a cpu-mode sample that stands for several periods counts once).
    var taken = 0
    /// The sum over the samples taken of the square of the periods each stands for.
    var takenWeightSquares = 0
    /// CPU time of the thread when first seen and when last seen, in ns.
    var firstCPU: Int64 = -1
    var lastCPU: Int64 = -1
    /// The thread blocked the profiling signal when last checked: it cannot be sampled while it does.
    var blocksSignal = false
    /// Monotonic time when first and last seen, in ns.
    var firstSeen: UInt64
    var lastSeen: UInt64

    /// CPU time used while profiled.
    var cpuNanoseconds: UInt64 { firstCPU >= 0 && lastCPU >= firstCPU ? UInt64(lastCPU - firstCPU) : 0 }
}
