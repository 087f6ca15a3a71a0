import CEngine
import Glibc
import StackSampler
import StackSamplerDaemon
import Synchronization

// The HTTP endpoints in a preloaded process (STACKSAMPLER_LISTEN). Until the daemon coordinator
// serves them from a continuous session, each request takes an on-demand session of its own.

private let preloadServer = Mutex<ProfileServer?>(nil)

/// Starts the profile server when `STACKSAMPLER_LISTEN` is set (`STACKSAMPLER_MAX_REQUEST_SECONDS`
/// bounds its requests; `STACKSAMPLER_PERIOD` sets its sessions' period), and stops it at exit. A
/// bad setting or a listener that cannot be opened is said in one line; the program runs on.
func startProfileServerIfAsked() {
    let listen: [ListenAddress]
    let maxSeconds: Int
    var configuration = ProfilerConfiguration()
    do {
        guard let text = try PreloadSettings.read(SessionSettings.listen) else { return }
        listen = try ListenAddress.parseList(text)
        maxSeconds = try PreloadSettings.read(SessionSettings.maxRequestSeconds) ?? 300
        if let period = try PreloadSettings.read(SessionSettings.period) { configuration.period = period }
        if let depth = try PreloadSettings.read(SessionSettings.maxDepth) { configuration.maxDepth = depth }
    } catch {
        reportServer("\(error); not listening")
        return
    }
    do {
        let server = try ProfileServer(listen: listen, provider: OnDemandProfileProvider(configuration: configuration), maxSeconds: maxSeconds)
        preloadServer.withLock { $0 = server }
        atexit(stopProfileServerAtExit)
    } catch {
        reportServer("\(error.description); not listening")
    }
}

private func stopProfileServerAtExit() {
    let previous = ss_thread_set_excluded(1)
    preloadServer.withLock { $0 }?.stop()
    _ = ss_thread_set_excluded(previous)
}

private func reportServer(_ message: String) {
    var bytes = Array("stacksampler: \(message)\n".utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
