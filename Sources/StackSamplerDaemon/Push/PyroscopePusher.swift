import CEngine
import Glibc
import StackSampler

/// Pushes every window to a Pyroscope-compatible back end (`POST URL/ingest`, see
/// `PyroscopeIngest`), from a thread of its own that is never sampled.
///
/// `push(_:)` only queues the window and returns: a back end that is down or slow never blocks
/// the caller (the window thread) nor sampling. The queue is bounded (`PushSettings.queueLength`;
/// a new window drops the oldest waiting one); a failed attempt is retried after a backoff
/// (`PushPolicy`), up to a number of attempts; a refusal not worth retrying (a 4xx other than 408
/// and 429) is said once on stderr and not retried. `counters` says what was pushed, retried and
/// dropped, for the next window's report. `stop(deadline:)` flushes within a bounded time.
public final class PyroscopePusher: @unchecked Sendable {
    /// The settings pushed with.
    public let settings: PushSettings
    /// The retry policy.
    public let policy: PushPolicy
    private let transport: any HTTPTransport
    private let defaultName: PyroscopeAppName
    private let lock = WaitLock()
    // Under `lock`:
    private var schedule: PushSchedule<PendingWindow>
    private var inFlight = 0
    private var stopDeadline: UInt64?
    private var abandoned = false
    private var finished = false
    private var lastErrorText: String?
    /// Refusals already said on stderr (by status line), and whether an outage was said.
    private var refusalsSaid: Set<String> = []
    private var outageSaid = false
    /// Cancels the request in flight once `stop`'s time is up.
    private let cancellation = HTTPCancellation()

    /// Starts the push thread. `processName` names the application when the settings give no
    /// name. `transport` makes the requests (a fake one in tests).
    public init(settings: PushSettings, policy: PushPolicy = PushPolicy(), transport: any HTTPTransport = HTTPClient(),
                processName: String) throws(PushError) {
        self.settings = settings
        self.policy = policy
        self.transport = transport
        defaultName = settings.appName ?? PyroscopeAppName(service: PyroscopeAppName.sanitizedService(processName))
        schedule = PushSchedule(capacity: settings.queueLength, policy: policy)
        // A profiler thread (ProfilerThreads): never attached, sampled or walked in any session.
        let handle: pthread_t
        do {
            handle = try ProfilerThreads.spawn { [self] in run() }
        } catch {
            throw .cannotStart(error.description)
        }
        pthread_detach(handle)
    }

    /// A pusher with the environment's settings (`PushSettings.fromEnvironment`), nil when
    /// `STACKSAMPLER_PUSH` is unset; `processName` names the application when
    /// `STACKSAMPLER_APP_NAME` does not.
    public static func fromEnvironment(processName: String) throws(PushError) -> PyroscopePusher? {
        guard let settings = try PushSettings.fromEnvironment() else { return nil }
        return try PyroscopePusher(settings: settings, processName: processName)
    }

    /// The application name pushed.
    public var appName: PyroscopeAppName { defaultName }

    /// Queues `profile` (one window) to be pushed; returns at once. After `stop`, the window is
    /// counted as dropped.
    public func push(_ profile: Profile) {
        lock.withLock {
            guard stopDeadline == nil else {
                schedule.dropAtStop()
                return
            }
            schedule.enqueue(PendingWindow(profile: profile))
            lock.broadcast()
        }
    }

    /// What was pushed, retried and dropped so far.
    public var counters: PushCounters { lock.withLock { schedule.counters } }

    /// Windows waiting to be pushed, the one being sent included.
    public var pending: Int { lock.withLock { schedule.waiting.count + inFlight } }

    /// The last failure (no response, or the status and the server's text), nil if none yet.
    public var lastError: String? { lock.withLock { lastErrorText } }

    /// Pushes what is queued for at most `deadline` (retrying as usual meanwhile), then gives up:
    /// windows still waiting, and the one on its way, are counted in `droppedAtStop`. Returns the
    /// final counters. Later windows given to `push` are dropped and counted.
    @discardableResult
    public func stop(deadline: Duration) -> PushCounters {
        let end = ss_now_ns() &+ deadline.wholeNanoseconds
        lock.withLock {
            if stopDeadline == nil { stopDeadline = end }
            lock.broadcast()
            while !finished && ss_now_ns() < end { lock.wait(until: end) }
        }
        // Time is up: end the request on its way (libcurl notices within about a second).
        cancellation.cancel()
        return lock.withLock {
            let grace = ss_now_ns() &+ 1_500_000_000
            while !finished && ss_now_ns() < grace { lock.wait(until: grace) }
            if !finished && !abandoned {
                abandoned = true
                schedule.abandon(inFlight: inFlight)
            }
            return schedule.counters
        }
    }

    /// The push thread's loop.
    private func run() {
        lock.withLock {
            while true {
                let now = ss_now_ns()
                if let end = stopDeadline, now >= end || schedule.waiting.isEmpty {
                    if !schedule.waiting.isEmpty { schedule.abandon(inFlight: 0) }
                    break
                }
                switch schedule.next(now: now) {
                case .idle: lock.wait(until: nil)
                case .wait(let until): lock.wait(until: stopDeadline.map { min($0, until) } ?? until)
                case .send(let pending):
                    inFlight = 1
                    let timeout = stopDeadline.map { min(policy.requestTimeout.wholeNanoseconds, $0 &- now) } ?? policy.requestTimeout.wholeNanoseconds
                    lock.unlocked { attempt(pending, timeoutNanoseconds: timeout) }
                    inFlight = 0
                }
                if abandoned { break }
            }
            finished = true
            lock.broadcast()
        }
    }

    /// Sends one window (called without the lock) and records what came of it (with it).
    private func attempt(_ pending: PushSchedule<PendingWindow>.Pending, timeoutNanoseconds: UInt64) {
        let outcome: PushOutcome
        do throws(PushError) {
            var request = try request(for: pending.payload, timeoutMilliseconds: Int(max(1, timeoutNanoseconds / 1_000_000)))
            request.cancellation = cancellation
            outcome = PushOutcome.of(transport.send(request))
        } catch {
            outcome = .failed(error.description)
        }
        lock.withLock {
            guard !abandoned else { return }
            schedule.finish(pending, outcome, now: ss_now_ns())
            report(outcome)
        }
    }

    /// The request of one window; the pprof is rendered once, at the first attempt.
    private func request(for window: PendingWindow, timeoutMilliseconds: Int) throws(PushError) -> HTTPClientRequest {
        if window.pprof == nil { window.pprof = window.profile.rendered(as: .pprof) }
        var headers: [(name: String, value: String)] = []
        if let tenant = settings.tenant { headers.append(("X-Scope-OrgID", tenant)) }
        if let authorization = try settings.credentials.authorizationHeader() { headers.append(("Authorization", authorization)) }
        return PyroscopeIngest.request(base: settings.url, name: defaultName, profile: window.profile, pprof: window.pprof ?? [],
                                       headers: headers, timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Says on stderr, once each, a refusal, an outage, and the end of an outage (under the lock).
    private func report(_ outcome: PushOutcome) {
        switch outcome {
        case .pushed:
            if outageSaid {
                outageSaid = false
                StandardError.report("pushes to \(settings.url) succeed again")
            }
        case .failed(let reason):
            lastErrorText = reason
            if !outageSaid {
                outageSaid = true
                StandardError.report("cannot push to \(settings.url) (\(reason)); retrying with backoff, keeping up to \(settings.queueLength) windows")
            }
        case .rejected(let reason):
            lastErrorText = reason
            let status = String(reason.prefix { $0 != ":" })
            if refusalsSaid.insert(status).inserted {
                StandardError.report("\(settings.url)/ingest refused a window (\(reason)); such windows are dropped, not retried: check the URL, application name and credentials")
            }
        }
    }
}

/// One window waiting to be pushed; its pprof once rendered. Touched only by the push thread.
private final class PendingWindow: @unchecked Sendable {
    let profile: Profile
    var pprof: [UInt8]?

    init(profile: Profile) { self.profile = profile }
}
