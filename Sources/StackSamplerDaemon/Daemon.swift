import CEngine
import Glibc
import StackSampler
import Synchronization

/// The profiler living inside a service: a continuous session whose windows are written to
/// files and handed to the pushers, and (from the server) profiles on request. Started by the
/// preload library when a daemon setting is given; `stop()` ends it and writes the last window.
package final class Daemon: Sendable {
    /// What each window goes to besides the files (the push back end's client).
    package typealias WindowSink = @Sendable (Profile) -> [String]

    private let settings: DaemonSettings
    private let files: WindowFiles?
    private let sinks: [WindowSink]
    private let windowsWritten = Atomic<Int>(0)
    private let continuous: Bool

    /// Starts the daemon: with a window length, a continuous session with `configuration`
    /// whose windows go to `outputs` (pid already in the paths; `%t` rotates) and to `sinks`.
    /// Without one, nothing samples until a request comes (the caller starts the server with
    /// `provider`).
    package init(settings: DaemonSettings, configuration: ProfilerConfiguration, outputs: [OutputTarget], summaryPath: String?,
                 options: ExportOptions, sinks: [WindowSink] = []) throws(ProfilerError) {
        self.settings = settings
        self.sinks = sinks
        continuous = settings.window != nil
        files = outputs.isEmpty && summaryPath == nil ? nil
            : WindowFiles(outputs: outputs, summaryPath: summaryPath, options: options, keep: settings.keep)
        guard let window = settings.window else { return }
        try Profiler.startContinuous(configuration, window: window) { [self] profile in handle(profile) }
    }

    /// The provider of the daemon's HTTP endpoints: spans of the running session, else
    /// on-demand sessions with `configuration`.
    package func provider(onDemand configuration: ProfilerConfiguration) -> SessionProfiles {
        SessionProfiles(onDemand: configuration) { [self] in
            let window = settings.window.map { "\"continuous_window_ns\":\($0.wholeNanoseconds)" } ?? "\"continuous_window_ns\":null"
            return window + ",\"windows_written\":\(windowsWritten.load(ordering: .relaxed))"
        }
    }

    /// Ends the continuous session (if this daemon runs one) and writes its last, partial window.
    package func stop() {
        guard continuous, let profile = try? Profiler.stop() else { return }
        handle(profile)
    }

    /// One window: written, then handed to each sink; what goes wrong is said on stderr.
    private func handle(_ profile: Profile) {
        var problems: [String] = []
        if let files { problems += files.write(profile).errors }
        for sink in sinks { problems += sink(profile) }
        windowsWritten.add(1, ordering: .relaxed)
        for problem in problems { StandardError.report(problem) }
    }
}
