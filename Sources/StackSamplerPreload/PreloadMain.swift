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

/// Called by the preload library's constructor before `main` when `STACKSAMPLER_OUTPUT` is set
/// and this process owns the output: starts sampling, and arranges for the profile to be
/// written at exit.
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
    guard let file = fopen(path, "w") else {
        report("cannot write the summary to \(path): \(String(cString: strerror(errno)))")
        return
    }
    fputs(text, file)
    fclose(file)
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
