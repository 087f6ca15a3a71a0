import Glibc
import CAPIHeader
import StackSampler
import Synchronization

// The C API declared in `stacksampler.h` (StackSamplerPreload/include): start, stop and write a
// profile from C or C++. The preload library's `stacksampler_start`, `_stop` and `_write` load
// this library on first use and forward to these (preload_swift_part.h).

/// The profile of the last session stopped through the C API, for `stacksampler_write`.
private let stoppedProfile = Mutex<Profile?>(nil)

/// `int stacksampler_start(uint64_t period_ns, int mode)`.
@_cdecl("stacksampler_swift_start")
public func stacksamplerStart(_ periodNanoseconds: UInt64, _ mode: Int32) -> Int32 {
    let samplingMode: SamplingMode
    switch mode {
    case STACKSAMPLER_MODE_CPU: samplingMode = .cpu
    case STACKSAMPLER_MODE_WALL: samplingMode = .wall
    default: return STACKSAMPLER_ERROR_INVALID_ARGUMENT
    }
    guard periodNanoseconds <= UInt64(Int64.max) else { return STACKSAMPLER_ERROR_INVALID_ARGUMENT }
    do {
        try Profiler.start(period: .nanoseconds(Int64(periodNanoseconds)), mode: samplingMode)
        return STACKSAMPLER_OK
    } catch {
        return status(of: error)
    }
}

/// `int stacksampler_stop(void)`.
@_cdecl("stacksampler_swift_stop")
public func stacksamplerStop() -> Int32 {
    do {
        let profile = try Profiler.stop()
        stoppedProfile.withLock { $0 = profile }
        return STACKSAMPLER_OK
    } catch {
        return status(of: error)
    }
}

/// `int stacksampler_write(const char *path, const char *format)`.
@_cdecl("stacksampler_swift_write")
public func stacksamplerWrite(_ path: UnsafePointer<CChar>?, _ format: UnsafePointer<CChar>?) -> Int32 {
    guard let path else { return STACKSAMPLER_ERROR_INVALID_ARGUMENT }
    var named: OutputFormat?
    if let format {
        guard let known = OutputFormat(rawValue: String(cString: format)) else { return STACKSAMPLER_ERROR_INVALID_ARGUMENT }
        named = known
    }
    guard let profile = stoppedProfile.withLock({ $0 }) else { return STACKSAMPLER_ERROR_NO_PROFILE }
    let target = OutputTarget(path: String(cString: path), format: named)
    do {
        try profile.write(to: target.path, format: target.format)
        return STACKSAMPLER_OK
    } catch {
        return status(of: error)
    }
}

/// The C API code of a profiler error.
private func status(of error: ProfilerError) -> Int32 {
    switch error {
    case .alreadyRunning: STACKSAMPLER_ERROR_ALREADY_RUNNING
    case .notRunning: STACKSAMPLER_ERROR_NOT_RUNNING
    case .noFreeSignal: STACKSAMPLER_ERROR_UNAVAILABLE
    case .invalidConfiguration, .invalidPeriod: STACKSAMPLER_ERROR_INVALID_ARGUMENT
    case .outputFailed: STACKSAMPLER_ERROR_WRITE_FAILED
    }
}
