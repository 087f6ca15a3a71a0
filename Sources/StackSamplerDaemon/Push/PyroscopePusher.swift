import StackSampler

/// Pushes every window to a Pyroscope-compatible back end (`POST URL/ingest`, see
/// `PyroscopeIngest`), from a thread of its own that is never sampled (`PushThread`: bounded
/// queue, backoff, counted drops; `push(_:)` never blocks). `counters` says what was pushed,
/// retried and dropped, for the next window's report. `stop(deadline:)` flushes within a bounded time.
package final class PyroscopePusher: WindowPusher {
    /// The settings pushed with.
    package let settings: PushSettings
    /// The retry policy.
    package var policy: PushPolicy { thread.policy }
    private let thread: PushThread<PendingWindow>
    private let defaultName: PyroscopeAppName

    /// Starts the push thread. `processName` names the application when the settings give no
    /// name. `transport` makes the requests (a fake one in tests).
    package init(settings: PushSettings, policy: PushPolicy = PushPolicy(), transport: any HTTPTransport = HTTPClient(),
                processName: String) throws(PushError) {
        self.settings = settings
        let name = settings.appName ?? PyroscopeAppName(service: PyroscopeAppName.sanitizedService(processName))
        defaultName = name
        let destination = PushDestination<PendingWindow>(
            name: settings.url, unit: "windows",
            request: { window, timeoutMilliseconds throws(PushError) in
                try Self.request(for: window, settings: settings, name: name, timeoutMilliseconds: timeoutMilliseconds)
            },
            refusal: { reason in
                "\(settings.url)/ingest refused a window (\(reason)); such windows are dropped, not retried: check the URL, application name and credentials"
            })
        thread = try PushThread(destination: destination, queueLength: settings.queueLength, policy: policy, transport: transport)
    }

    /// A pusher with the environment's settings (`PushSettings.fromEnvironment`), nil when
    /// `STACKSAMPLER_PUSH` is unset; `processName` names the application when
    /// `STACKSAMPLER_APP_NAME` does not.
    package static func fromEnvironment(processName: String) throws(PushError) -> PyroscopePusher? {
        guard let settings = try PushSettings.fromEnvironment() else { return nil }
        return try PyroscopePusher(settings: settings, processName: processName)
    }

    /// The application name pushed.
    package var appName: PyroscopeAppName { defaultName }

    /// Queues `profile` (one window) to be pushed; returns at once. After `stop`, the window is
    /// counted as dropped.
    package func push(_ profile: Profile) { thread.push(PendingWindow(profile: profile)) }

    /// What the window reports and the status object call this pusher's figures.
    package var reportName: String { "push" }

    /// What is counted: windows.
    package var unit: String { "windows" }

    /// The thread that sends, retries and counts.
    package var control: any PushControl { thread }

    /// The request of one window; the pprof is rendered once, at the first attempt.
    private static func request(for window: PendingWindow, settings: PushSettings, name: PyroscopeAppName,
                                timeoutMilliseconds: Int) throws(PushError) -> HTTPClientRequest {
        if window.pprof == nil { window.pprof = window.profile.rendered(as: .pprof) }
        var headers: [(name: String, value: String)] = []
        if let tenant = settings.tenant { headers.append(("X-Scope-OrgID", tenant)) }
        if let authorization = try settings.credentials.authorizationHeader() { headers.append(("Authorization", authorization)) }
        return PyroscopeIngest.request(base: settings.url, name: name, profile: window.profile, pprof: window.pprof ?? [],
                                       headers: headers, timeoutMilliseconds: timeoutMilliseconds)
    }
}

/// One window waiting to be pushed; its pprof once rendered. Touched only by the push thread.
private final class PendingWindow: @unchecked Sendable {
    let profile: Profile
    var pprof: [UInt8]?

    init(profile: Profile) { self.profile = profile }
}
