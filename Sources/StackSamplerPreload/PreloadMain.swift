import Glibc
import StackSampler
import Synchronization

/// The running preload session: what to write at exit, and which process owns it
/// (a forked child inherits the exit handler but not the sampler thread).
private struct PreloadSession: Sendable {
    var settings: PreloadSettings
    var ownerPID: pid_t
}

private let preloadSession = Mutex<PreloadSession?>(nil)

/// Called by the library constructor before `main`: starts sampling if
/// `STACKSAMPLER_OUTPUT` is set, and arranges for the profile to be written at exit.
@_cdecl("stacksampler_preload_main")
public func stacksamplerPreloadMain() {
    let settings: PreloadSettings
    do {
        guard let read = try PreloadSettings.fromEnvironment() else { return }
        settings = read
    } catch {
        report("\(error.message); this run is not profiled")
        return
    }
    guard ownsOutput(settings) else { return }
    do {
        try Profiler.start(settings.configuration)
    } catch {
        report("\(error); this run is not profiled")
        return
    }
    preloadSession.withLock { $0 = PreloadSession(settings: settings, ownerPID: getpid()) }
    atexit(writeProfileAtExit)
    pthread_atfork(nil, nil, startInForkedChild)
}

/// A child made by fork() inherits no sampler thread and no timers. With `%p`
/// in the path it profiles itself into its own file; without, it stays idle
/// (the exit handler sees that it is not the owner).
private func startInForkedChild() {
    guard let inherited = preloadSession.withLock({ $0 }), inherited.settings.isPerProcess else { return }
    // Read again, so that every %p path (stream, invocations, stalls) names this process.
    guard let settings = try? PreloadSettings.fromEnvironment() else { return }
    do {
        try Profiler.start(settings.configuration)
    } catch {
        report("\(error); forked process \(getpid()) is not profiled")
        return
    }
    preloadSession.withLock { $0 = PreloadSession(settings: settings, ownerPID: getpid()) }
}

/// Whether this process should write the output. A program started by the
/// profiled one inherits the environment; without `%p` in the path it would
/// overwrite the parent's profile, so it stays idle and says so.
private func ownsOutput(_ settings: PreloadSettings) -> Bool {
    guard !settings.isPerProcess else { return true }
    if let owner = getenv(PreloadSettings.ownerVariable).map({ String(cString: $0) }), owner != String(getpid()) {
        report("process \(getpid()) is a descendant of profiled process \(owner) and \(PreloadSettings.outputVariable) has no %p; not profiling it (put %p in the path to profile every process)")
        return false
    }
    setenv(PreloadSettings.ownerVariable, String(getpid()), 1)
    return true
}

private func writeProfileAtExit() {
    guard let session = preloadSession.withLock({ $0 }), session.ownerPID == getpid() else { return }
    let profile: Profile
    do { profile = try Profiler.stop() } catch { return }
    var written: [String] = []
    for target in session.settings.outputs {
        do {
            try profile.write(to: target.path, format: target.format, options: session.settings.options)
            written.append(target.path)
        } catch {
            report("\(error)")
        }
    }
    if let path = session.settings.invocations.outputPath {
        do {
            try profile.writeInvocations(to: path, format: session.settings.invocations.format)
            written.append(path)
        } catch {
            report("\(error)")
        }
    }
    guard !written.isEmpty, let summaryPath = session.settings.summaryPath else { return }
    let text = profile.summary + "stacksampler: wrote \(written.joined(separator: ", "))\n"
    if summaryPath == "-" {
        writeStandardError(text)
    } else {
        writeText(text, to: summaryPath)
    }
}

private func writeText(_ text: String, to path: String) {
    do {
        try FileIO.write(Array(text.utf8), to: path)
    } catch {
        report("cannot write the summary: \(error)")
    }
}

private func report(_ message: String) {
    writeStandardError("stacksampler: \(message)\n")
}

private func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
        guard written > 0 else { return }
        bytes = bytes.dropFirst(written)
    }
}
