import Glibc
import StackSampler
import Synchronization

/// The daemon's profiles: a span of the running session when the process samples (continuously,
/// or a one-shot session that writes its profile at exit), else an on-demand session of the
/// request's length. One request at a time.
package final class SessionProfiles: ProfileProvider {
    /// Settings of on-demand sessions (their mode is the request's).
    private let onDemand: ProfilerConfiguration
    private let serving = Atomic<Bool>(false)
    /// What the daemon adds to the status line (windows, pushes).
    private let daemonStatus: @Sendable () -> String

    /// Profiles with `onDemand`'s settings when nothing samples; `daemonStatus` gives the
    /// status line's daemon fields (`"key":value` pairs, comma-separated, or empty).
    package init(onDemand: ProfilerConfiguration, daemonStatus: @escaping @Sendable () -> String) {
        self.onDemand = onDemand
        self.daemonStatus = daemonStatus
    }

    package func profile(seconds: Int, mode: SamplingMode) -> Result<Profile, ProfileRequestError> {
        guard serving.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return .failure(.busy) }
        defer { serving.store(false, ordering: .releasing) }
        ProfilerThreads.enter()
        defer { ProfilerThreads.leave() }
        let duration = Duration.seconds(seconds)
        // A session may start or end between the look and the request: one more try then.
        for _ in 0..<2 {
            if let running = Profiler.runningConfiguration {
                guard running.mode == mode else { return .failure(.modeConflict(running: running.mode)) }
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
        var fields = ["\"pid\":\(getpid())"]
        if let running = Profiler.runningConfiguration {
            fields.append("\"sampling\":true,\"mode\":\"\(running.mode.rawValue)\",\"period_ns\":\(running.periodNanoseconds)")
        } else {
            fields.append("\"sampling\":false,\"on_demand_period_ns\":\(onDemand.periodNanoseconds)")
        }
        let extra = daemonStatus()
        if !extra.isEmpty { fields.append(extra) }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
