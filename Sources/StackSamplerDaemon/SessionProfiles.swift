import Glibc
import StackSampler
import Synchronization

/// The daemon's profiles: a span of the running session when the process samples (continuously,
/// or a one-shot session that writes its profile at exit), else an on-demand session of the
/// request's length. One request at a time. Call it on a thread of the profiler's own
/// (`ProfilerThreads.spawn`, as the server's workers are), which it blocks for the request.
package final class SessionProfiles: ProfileProvider {
    /// Settings of on-demand sessions (their mode is the request's).
    private let onDemand: ProfilerConfiguration
    private let serving = Atomic<Bool>(false)
    /// Adds the daemon's fields (windows, listeners, pushes) to the status object.
    private let daemonStatus: @Sendable (inout JSONWriter) -> Void

    /// Profiles with `onDemand`'s settings when nothing samples; `daemonStatus` adds the
    /// daemon's own fields to the status object.
    package init(onDemand: ProfilerConfiguration, daemonStatus: @escaping @Sendable (inout JSONWriter) -> Void) {
        self.onDemand = onDemand
        self.daemonStatus = daemonStatus
    }

    package func profile(seconds: Int, mode: SamplingMode) -> Result<Profile, ProfileRequestError> {
        take(seconds: seconds, mode: mode, calls: false)
    }

    /// Calls are wall-clock durations: an on-demand session samples in wall mode, with the
    /// on-demand invocation settings (or the defaults); a running session must track invocations.
    package func calls(seconds: Int) -> Result<Profile, ProfileRequestError> {
        take(seconds: seconds, mode: Profiler.runningConfiguration?.mode ?? .wall, calls: true)
    }

    /// A span of the running session, or an on-demand session, of `seconds` in `mode`; with `calls`, tracking invocations.
    private func take(seconds: Int, mode: SamplingMode, calls: Bool) -> Result<Profile, ProfileRequestError> {
        guard serving.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return .failure(.busy) }
        defer { serving.store(false, ordering: .releasing) }
        let duration = Duration.seconds(seconds)
        // A session may start or end between the look and the request: one more try then.
        for _ in 0..<2 {
            if let running = Profiler.runningConfiguration {
                guard running.mode == mode else { return .failure(.modeConflict(running: running.mode)) }
                if calls, running.invocations.map({ $0.capacity > 0 }) != true {
                    return .failure(.unavailable("this process's session does not track calls; start it with STACKSAMPLER_INVOCATIONS=1 (or a file)"))
                }
                do {
                    return .success(try Profiler.profileOfNext(duration))
                } catch .notRunning {
                    continue
                } catch {
                    return .failure(.unavailable("\(error)"))
                }
            }
            var configuration = onDemand
            configuration.mode = mode
            if mode == .wall { configuration.event = nil }
            if calls {
                var invocations = configuration.invocations ?? InvocationConfiguration()
                if invocations.capacity == 0 { invocations.capacity = InvocationConfiguration().capacity }
                // Stall reports belong to the process's own sessions (a stalls file would be started afresh).
                invocations.stallThreshold = nil
                invocations.stallsPath = nil
                configuration.invocations = invocations
            }
            do {
                return .success(try Profiler.profileOnDemand(for: duration, configuration))
            } catch .alreadyRunning {
                continue
            } catch {
                return .failure(.unavailable("\(error)"))
            }
        }
        return .failure(.busy)
    }

    package func status() -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("pid")
        json.integer(getpid())
        let running = Profiler.runningConfiguration
        json.key("sampling")
        json.bool(running != nil)
        json.key("profiling")
        json.bool(serving.load(ordering: .relaxed))
        json.key("mode")
        json.string((running ?? onDemand).mode.rawValue)
        json.key("period_ns")
        json.integer((running ?? onDemand).periodNanoseconds)
        daemonStatus(&json)
        json.endObject()
        return json.text
    }
}
