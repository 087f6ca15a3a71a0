import CEngineHeader
import Glibc
import StackSampler
import Synchronization

/// The profiler living inside a service: a continuous session whose windows are written to
/// files and pushed to back ends (Pyroscope, OTLP), and the HTTP endpoints that serve
/// profiles on request (spans of the running session, or on-demand sessions). Started by the
/// preload library when a daemon setting is given; `stop()` ends it and hands out the last window.
package final class Daemon: Sendable {
    private let settings: DaemonSettings
    private let files: WindowFiles?
    private let pushers: [any WindowPusher]
    private let windowsHandled = Atomic<Int>(0)
    /// Each pusher's counters when the window before was handed to it.
    private let pushedBefore: Mutex<[PushCounters]>
    /// The default per-process socket's server.
    private let server = Mutex<ProfileServer?>(nil)
    /// The listen addresses' server, when they were bound at start; given up to a descendant
    /// that asks for them (`ListenRelease`).
    private let addressServer = Mutex<ProfileServer?>(nil)
    /// In a forked child: the listen addresses, taken once the parent that holds them is gone.
    private let handOver = Mutex<ListenHandOver?>(nil)

    /// Starts the daemon: with a window length, a continuous session with `configuration` whose
    /// windows go to `outputs` and `calls` (pid already in the paths; `%t` rotates) and to `pushers`; and the
    /// endpoints (the default socket, and `settings.listen`), whose on-demand sessions take
    /// `configuration`'s settings. A listener that cannot be opened is said on stderr and left
    /// out: the rest runs. In a forked child, `parent` is the process that forked it: the listen
    /// addresses are the parent's while it lives (`ListenHandOver`), the child serves its default
    /// socket meanwhile. The addresses are given up to a program it started that asks for them
    /// when it only started it (`ListenRelease`). Throws if the session cannot start.
    package init(settings: DaemonSettings, configuration: ProfilerConfiguration, outputs: [OutputTarget], summaryPath: String?,
                 options: ExportOptions, calls: WindowCallFiles = WindowCallFiles(invocationsPath: nil, invocationFormat: .chrome, callsPath: nil),
                 pushers: [any WindowPusher], parent: pid_t? = nil) throws(ProfilerError) {
        self.settings = settings
        self.pushers = pushers
        pushedBefore = Mutex(pushers.map { _ in PushCounters() })
        files = outputs.isEmpty && summaryPath == nil && calls.isEmpty ? nil
            : WindowFiles(outputs: outputs, summaryPath: summaryPath, options: options, keep: settings.keep, calls: calls)
        // The endpoints first, the session last: the main thread, in a preloaded program's
        // constructor, is sampled from the session's start, and its walks through the
        // profiler's own code (loading the HTTP library) would end early and make the sampler
        // compile the profiler's own unwind tables at once (module_cache.c).
        do {
            let listen = try settings.listen.map { text throws(ListenAddressError) in try ListenAddress.parseList(text) } ?? []
            let provider = SessionProfiles(onDemand: configuration) { [self] json in statusFields(&json) }
            let maxSeconds = settings.maxRequestSeconds
            let explicit = listen.filter { $0 != .defaultSocket }
            let started = try ProfileServer(listen: [], provider: provider, maxSeconds: maxSeconds) { [self] requester in
                ListenRelease.answer(requester) { giveUpAddresses() }
            }
            server.withLock { $0 = started }
            if !explicit.isEmpty { serve(explicit, provider: provider, maxSeconds: maxSeconds, parent: parent) }
        } catch {
            StandardError.report("\(error); the profile endpoints are not served")
        }
        if let window = settings.window {
            // No file and no back end: windows are cut unnamed (no symbolization), only requests read the session.
            var onWindow: (@Sendable (Profile) -> Void)?
            if files != nil || !pushers.isEmpty { onWindow = { [self] profile in handle(profile) } }
            do {
                try Profiler.startContinuous(configuration, window: window, onWindow: onWindow)
            } catch {
                handOver.withLock { $0 }?.stop()
                addressServer.withLock { $0 }?.stop()
                server.withLock { $0 }?.stop()
                throw error
            }
        }
    }

    /// Serves the listen addresses `explicit`: now, or, in a forked child, once `parent` is gone.
    private func serve(_ explicit: [ListenAddress], provider: SessionProfiles, maxSeconds: Int, parent: pid_t?) {
        let open: @Sendable () throws(ProfileServerError) -> ProfileServer = { () throws(ProfileServerError) in
            try ProfileServer(listen: explicit, defaultSocket: false, provider: provider, maxSeconds: maxSeconds)
        }
        if let parent {
            handOver.withLock { $0 = ListenHandOver(parent: parent, open: open) }
            return
        }
        do throws(ProfileServerError) {
            let opened = try open()
            addressServer.withLock { $0 = opened }
        } catch {
            StandardError.report("\(error); the listen addresses are not served")
        }
    }

    /// Stops serving the listen addresses (a descendant asked for them): the ones given up, or
    /// nil if none was served.
    private func giveUpAddresses() -> [String]? {
        guard let served = addressServer.withLock({ value -> ProfileServer? in defer { value = nil }; return value }) else { return nil }
        served.stop()
        return served.addresses
    }

    /// Stops serving, ends the continuous session (if this daemon runs one) and hands out its
    /// last, partial window; then gives the pushers `pushDeadline` to send what waits, and one
    /// `PushStop.grace` between them to end a request still on its way. The session ends at
    /// `asked`, when the caller began to stop it.
    package func stop(pushDeadline: Duration = .seconds(2), since asked: UInt64 = ss_now_ns()) {
        handOver.withLock { $0 }?.stop()
        addressServer.withLock { $0 }?.stop()
        server.withLock { $0 }?.stop()
        if settings.window != nil, let profile = try? Profiler.stop(since: asked), files != nil || !pushers.isEmpty { handle(profile) }
        // Every pusher sends on its own thread: they are stopped together.
        let final = PushStop.all(pushers.map(\.control), deadline: pushDeadline)
        for (pusher, counters) in zip(pushers, final) {
            if counters.droppedAtStop > 0 {
                StandardError.report("\(pusher.reportName): \(counters.droppedAtStop) \(pusher.unit) could not be sent before exit (\(pusher.lastError ?? "the back end was slow"))")
            }
        }
    }

    /// One window: the pushers' reports since the window before added, written, then queued for the back ends.
    private func handle(_ profile: Profile) {
        var profile = profile
        for index in pushers.indices { profile.window?.reports.append(pushReport(index)) }
        for problem in files?.write(profile).errors ?? [] { StandardError.report(problem) }
        for pusher in pushers { pusher.push(profile) }
        windowsHandled.add(1, ordering: .relaxed)
    }

    /// `push: …` since the window before: sent, retried, dropped and why, the queue, the last error.
    private func pushReport(_ index: Int) -> String {
        let pusher = pushers[index], now = pusher.counters, unit = pusher.unit
        let before = pushedBefore.withLock { before in
            defer { before[index] = now }
            return before[index]
        }
        let dropped = now.dropped - before.dropped
        var line = "\(pusher.reportName): \(now.pushed - before.pushed) \(unit) sent, \(now.retried - before.retried) attempts retried, \(dropped) \(unit) dropped"
        if dropped > 0 {
            line += " (\(now.droppedQueueFull - before.droppedQueueFull) queue full, \(now.droppedRejected - before.droppedRejected) refused, "
                + "\(now.droppedGaveUp - before.droppedGaveUp) attempts used up)"
        }
        line += " since the window before; \(pusher.pending) waiting"
        if let error = pusher.lastError { line += "; last error: \(error)" }
        return line
    }

    /// The daemon's fields of the status object.
    private func statusFields(_ json: inout JSONWriter) {
        json.key("continuous_window_ns")
        if let window = settings.window { json.integer(window.wholeNanoseconds) } else { json.null() }
        json.key("windows")
        json.integer(windowsHandled.load(ordering: .relaxed))
        json.key("listening")
        json.beginArray()
        for address in server.withLock({ $0?.addresses ?? [] }) + addressServer.withLock({ $0?.addresses ?? [] })
            + (handOver.withLock { $0 }?.addresses ?? []) { json.string(address) }
        json.endArray()
        for pusher in pushers {
            let counters = pusher.counters
            json.key(pusher.reportName)
            json.beginObject()
            for (name, value) in [("sent", counters.pushed), ("retried", counters.retried), ("dropped", counters.dropped), ("waiting", pusher.pending)] {
                json.key(name)
                json.integer(value)
            }
            json.endObject()
        }
    }
}
