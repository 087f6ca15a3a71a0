import Glibc
import StackSampler
import Synchronization

/// A provider for a process that does not sample continuously: each request starts a session of
/// its own (`Profiler.capture`) and waits for it. One at a time; while another session runs in the
/// process (a preload session writing at exit, the program's own), requests are `.unavailable`.
public final class OnDemandProfileProvider: ProfileProvider {
    /// The sessions' settings; the mode is each request's.
    private let configuration: ProfilerConfiguration
    private let state = Mutex<State>(State())

    private struct State {
        var busy = false
        var served = 0
        var lastError: String?
    }

    /// A provider whose sessions use `configuration` (period, engine, depth…).
    public init(configuration: ProfilerConfiguration = ProfilerConfiguration()) {
        self.configuration = configuration
    }

    public func profile(seconds: Int, mode: SamplingMode) -> Result<Profile, ProfileRequestError> {
        let taken = state.withLock { state in
            if state.busy { return false }
            state.busy = true
            return true
        }
        guard taken else { return .failure(.busy) }
        defer { state.withLock { $0.busy = false } }
        var configuration = configuration
        configuration.mode = mode
        let waiter = CaptureWaiter()
        do throws(ProfilerError) {
            try Profiler.capture(for: .seconds(seconds), configuration) { waiter.finish($0) }
        } catch {
            return failure(error)
        }
        switch waiter.wait() {
        case .success(let profile):
            state.withLock { $0.served += 1 }
            return .success(profile)
        case .failure(let error):
            return failure(error)
        }
    }

    public func status() -> String {
        let state = state.withLock { $0 }
        let period = configuration.period.components
        let periodNanoseconds = period.seconds * 1_000_000_000 + period.attoseconds / 1_000_000_000
        var json = "{\"pid\":\(getpid()),\"provider\":\"on-demand\",\"continuous\":false,\"profiling\":\(state.busy)"
        json += ",\"period_ns\":\(periodNanoseconds),\"profiles_served\":\(state.served)"
        if let error = state.lastError { json += ",\"last_error\":\"\(jsonEscaped(error))\"" }
        return json + "}"
    }

    private func failure(_ error: ProfilerError) -> Result<Profile, ProfileRequestError> {
        let reason: String = switch error {
        case .alreadyRunning: "another profiling session runs in this process (STACKSAMPLER_OUTPUT, or the program's own); on-demand profiles need the profiler free"
        default: "the profiler could not run: \(error)"
        }
        state.withLock { $0.lastError = reason }
        return .failure(.unavailable(reason))
    }

    private func jsonEscaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// Waits on the caller's thread for a capture's completion, which runs on the profiler's thread.
private final class CaptureWaiter: @unchecked Sendable {
    // @unchecked: `result` is written once under `lock` and read under it.
    private var lock = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var result: Result<Profile, ProfilerError>?

    init() {
        pthread_mutex_init(&lock, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&lock)
    }

    func finish(_ result: Result<Profile, ProfilerError>) {
        pthread_mutex_lock(&lock)
        self.result = result
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&lock)
    }

    func wait() -> Result<Profile, ProfilerError> {
        pthread_mutex_lock(&lock)
        while result == nil { pthread_cond_wait(&condition, &lock) }
        let result = self.result!
        pthread_mutex_unlock(&lock)
        return result
    }
}
