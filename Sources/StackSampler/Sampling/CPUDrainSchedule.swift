import CEngineHeader
import Glibc

/// cpu mode: the engine's timers take the samples; the sampler thread only drains the buffer,
/// as seldom as the buffer allows.
final class CPUDrainSchedule: SamplerSchedule {
    let intervalNanoseconds: UInt64
    var missedTicks: Int { 0 }
    var lostTicks: [TickLoss: Int] { [:] }
    var preemptionCounts: (atCopy: Int, atNearestSample: Int) { (0, 0) }

    /// A thread is sampled at most 1 / period times per CPU-second (the perf engine reaches
    /// that at any period; timers only at scheduler ticks), so all cores together fill the
    /// buffer at most at cores x rate samples a second. The buffer is drained when a quarter
    /// full at that pace, at most every 100 ms (every 100 ms on 2 cores at 100 Hz with the
    /// default 1024 slots; 40 ms on 64 cores), and at least every 5 ms (every 12.8 ms at 100 us
    /// on 2 cores).
    /// With `sampledEvent`, the rate is the event's, unknown in advance: every 5 ms.
    init(periodNanoseconds: UInt64, bufferSlots: Int, sampledEvent: Bool) {
        guard !sampledEvent else {
            intervalNanoseconds = 5_000_000
            return
        }
        let cores = UInt64(max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        let rate = 1_000_000_000 / max(1, periodNanoseconds)
        let quarterFull = UInt64(bufferSlots) * 1_000_000_000 / (4 * cores * max(1, rate))
        intervalNanoseconds = min(100_000_000, max(5_000_000, quarterFull))
    }

    func arrived(_ sample: Sample) -> Int { 0 }

    /// Nothing to do besides the drain: the sampler thread keeps the threads' CPU times current.
    func wake(at now: UInt64, due: Int, late: Int, threads: ArraySlice<Int32>, routing: inout SampleRouting) {}

    func threadEnded(_ tid: Int32) {}
}
