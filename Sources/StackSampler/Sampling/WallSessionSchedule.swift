/// The wall schedule of a session: on the kernel's probes, and recorded as a trace for the unit
/// tests when `STACKSAMPLER_WALL_TRACE` names one (`WallTraceRecorder`).
enum WallSessionSchedule {
    /// A schedule ticking every `periodNanoseconds`, its walks `maxDepth` deep, for an engine
    /// buffer of `bufferSlots` samples.
    static func make(periodNanoseconds: UInt64, maxDepth: Int, bufferSlots: Int) -> any SamplerSchedule {
        let kernel = KernelWallProbes(periodNanoseconds: periodNanoseconds, maxDepth: maxDepth)
        guard let path = WallTraceRecorder.requestedPath else {
            return WallScheduler(periodNanoseconds: periodNanoseconds, bufferSlots: bufferSlots, probes: kernel)
        }
        let trace = WallTraceRecorder(path: path)
        let scheduler = WallScheduler(periodNanoseconds: periodNanoseconds, bufferSlots: bufferSlots,
                                      probes: RecordingWallProbes(kernel, trace: trace))
        return RecordingWallSchedule(scheduler, header: WallTraceFormat.header(periodNanoseconds: periodNanoseconds, bufferSlots: bufferSlots,
                                                                               fixed: kernel.fixed),
                                     trace: trace)
    }
}
