import CEngineHeader
@testable import StackSampler

/// A sample as the engine writes it: `frames` leaf first, `flags` SS_SAMPLE_*, `cpu` the
/// thread's CPU time (wall mode; -1: none).
func engineSample(tid: Int32, frames: [UInt], flags: UInt32 = 0, at time: UInt64, periods: UInt32 = 1, cpu: Int64 = -1) -> Sample {
    let size = MemoryLayout<ss_sample>.stride + frames.count * MemoryLayout<UInt>.stride
    let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: MemoryLayout<ss_sample>.alignment)
    defer { raw.deallocate() }
    let sample = raw.bindMemory(to: ss_sample.self, capacity: 1)
    sample.pointee.time_ns = time
    sample.pointee.cpu_ns = cpu
    sample.pointee.tid = tid
    sample.pointee.depth = UInt16(frames.count)
    sample.pointee.flags = UInt16(flags)
    sample.pointee.periods = periods
    sample.pointee.async_frames = 0
    let slots = UnsafeMutablePointer(mutating: ss_sample_frames(sample))!
    for (index, frame) in frames.enumerated() { slots[index] = frame }
    return Sample(sample)
}
