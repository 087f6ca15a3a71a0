import CEngineHeader
import Glibc
import StackSampler
import StackSamplerDaemon
import Synchronization

/// The running preload session: what to write at exit, and which process owns it
/// (a forked child inherits the exit handler but not the sampler thread).
private struct PreloadSession: Sendable {
    var settings: PreloadSettings
    var ownerPID: pid_t
    /// The daemon, when a daemon setting is given: it runs the session (continuous) or serves
    /// beside it.
    var daemon: Daemon?

    init(settings: PreloadSettings, daemon: Daemon? = nil) {
        self.settings = settings
        ownerPID = getpid()
        self.daemon = daemon
    }

    /// Whether the daemon runs the session in windows (its files are the daemon's, not the exit's).
    var isContinuous: Bool { settings.isContinuous }
}

private let preloadSession = Mutex<PreloadSession?>(nil)
/// In a forked child: the sessions of the processes before it, whose daemon objects (threads,
/// descriptors) were theirs and are never stopped or released here.
private let inheritedSessions = Mutex<[PreloadSession]>([])

/// Called by the preload library's constructor before `main` when `STACKSAMPLER_OUTPUT` or a
/// daemon setting is given and this process owns them: starts sampling and the daemon as asked,
/// and arranges for the profile (or the last window) to be written at exit.
@_cdecl("stacksampler_preload_main")
public func stacksamplerPreloadMain() {
    let settings: PreloadSettings
    do {
        guard let read = try PreloadSettings.fromEnvironment() else { return }
        settings = read
    } catch {
        report("\(error.description); this run is not profiled")
        return
    }
    guard let session = start(settings) else { return }
    preloadSession.withLock { $0 = session }
    atexit(writeProfileAtExit)
    registerSessionHooks(for: settings)
}

/// Starts what `settings` ask for: the daemon (continuous windows, endpoints) and/or a session
/// whose profile is written at exit. Nil, said on stderr, if it cannot start. In a forked child,
/// `parent` is the process that forked it (see `Daemon`).
private func start(_ settings: PreloadSettings, parent: pid_t? = nil) -> PreloadSession? {
    guard settings.daemon.isActive else {
        do {
            try Profiler.start(settings.configuration)
        } catch {
            report("\(error); this run is not profiled")
            return nil
        }
        return PreloadSession(settings: settings)
    }
    let daemon: Daemon
    do {
        var pushers: [any WindowPusher] = try PyroscopePusher.fromEnvironment(processName: FileIO.processName).map { [$0] } ?? []
        // Over OTLP only when windows are cut: the OTEL_* variables alone start nothing.
        if settings.daemon.window != nil, let otlp = OTLPPusher.fromEnvironment() { pushers.append(otlp) }
        // A one-shot session (written at exit) starts first, so that the endpoints serve spans of it.
        if !settings.isContinuous, !settings.outputPatterns.isEmpty { try Profiler.start(settings.configuration) }
        daemon = try Daemon(settings: settings.daemon, configuration: settings.configuration,
                            outputs: settings.isContinuous ? settings.outputs : [], summaryPath: settings.isContinuous ? settings.summaryPath : nil,
                            options: settings.options,
                            calls: WindowCallFiles(invocationsPath: settings.isContinuous ? settings.invocations.outputPath : nil,
                                                   invocationFormat: settings.invocations.format,
                                                   callsPath: settings.isContinuous ? settings.invocations.callsPath : nil),
                            pushers: pushers, parent: parent)
    } catch {
        report("\(error); this run is not profiled")
        _ = try? Profiler.stop()
        return nil
    }
    return PreloadSession(settings: settings, daemon: daemon)
}

/// What the engine calls around exec and fork (see `ss_session_hooks`), for this process.
/// Without `%p` and without a daemon setting a forked child stays idle, so the engine runs no
/// Swift code in it at all.
private func registerSessionHooks(for settings: PreloadSettings) {
    let forkedChildren = settings.isPerProcess || settings.daemon.isActive
    var hooks = ss_session_hooks(stop_for_exec: stopForExec, resume_after_failed_exec: resumeAfterFailedExec,
                                 start_in_forked_child: forkedChildren ? startInForkedChild : nil)
    ss_set_session_hooks(&hooks)
}

/// Before exec: the session stops (no timer, no sampler thread left to signal) and this
/// image's profile is written under its `.execN` names (`ExecImageNames`), which the new
/// image, of the same pid, will not overwrite.
private func stopForExec() -> Int32 {
    let asked = ss_now_ns() // the session ends here: what follows is the profiler's work
    guard let session = preloadSession.withLock({ $0 }), session.ownerPID == getpid() else { return 0 }
    session.daemon?.stop(pushDeadline: .milliseconds(500), since: asked)
    if session.isContinuous { return 1 }
    guard let profile = try? Profiler.stop(since: asked) else { return session.daemon == nil ? 0 : 1 }
    let paths = session.settings.outputs.map(\.path) + [session.settings.invocations.outputPath, session.settings.summaryPath].compactMap { $0 }
    let image = ExecImageNames.nextImage(for: paths.filter { $0 != "-" })
    write(profile, of: session) { ExecImageNames.name($0, image: image) }
    return 1
}

/// After an exec that failed: a new session, whose profile goes to the next name (the part
/// before the exec attempt is already written).
private func resumeAfterFailedExec() {
    guard let session = preloadSession.withLock({ $0 }), session.ownerPID == getpid() else { return }
    if session.settings.daemon.isActive {
        guard let resumed = start(session.settings) else { return }
        preloadSession.withLock { $0 = resumed }
        registerSessionHooks(for: session.settings)
        return
    }
    do {
        try Profiler.start(session.settings.configuration)
        registerSessionHooks(for: session.settings)
    } catch {
        report("\(error); process \(getpid()) is not profiled after its failed exec")
    }
}

/// A child made by fork() inherits no sampler thread and no timers. With `%p` in the path
/// it profiles itself into its own file; with a daemon setting it runs a daemon of its own
/// (its default socket; the listen addresses once its parent is gone, see `ListenHandOver`;
/// files only with `%p`, the parent's are the parent's). The engine calls this once the
/// parent's sampler thread is known to have held no lock at the fork and the loader's write
/// lock to be free (else the child says why it is not profiled). Without either it is not
/// called and the child stays idle (the exit handler sees that it is not the owner).
private func startInForkedChild(parent: Int32) {
    // Read again, so that every %p path (stream, invocations, stalls) names this process.
    guard var settings = try? PreloadSettings.fromEnvironment() else { return }
    if settings.daemon.isActive {
        guard !ProfileServer.wasBusyAtFork else {
            report("forked process \(getpid()): the parent's profiling server was answering a request at the fork (a lock it held may stay held here); this process is not profiled and runs no daemon")
            return
        }
        if !settings.isPerProcess {
            settings.outputPatterns = []
            settings.summaryPattern = nil
        }
        // The parent's session (and daemon) is the parent's: kept as it is, never stopped here.
        preloadSession.withLock { current in
            if let inherited = current { inheritedSessions.withLock { $0.append(inherited) } }
            current = nil
        }
        guard let session = start(settings, parent: parent) else { return }
        preloadSession.withLock { $0 = session }
        registerSessionHooks(for: settings)
        return
    }
    guard settings.isPerProcess else { return }
    do {
        try Profiler.start(settings.configuration)
    } catch {
        report("\(error); forked process \(getpid()) is not profiled")
        return
    }
    preloadSession.withLock { $0 = PreloadSession(settings: settings) }
    registerSessionHooks(for: settings)
}

private func writeProfileAtExit() {
    // The exit handler is the profiler's work, not the program's: the session ends here, and the
    // thread is never sampled again (it ends here).
    let asked = ss_now_ns()
    ss_thread_set_excluded(1)
    guard let session = preloadSession.withLock({ $0 }), session.ownerPID == getpid() else { return }
    session.daemon?.stop(since: asked)
    guard !session.isContinuous, !session.settings.outputPatterns.isEmpty, let profile = try? Profiler.stop(since: asked) else { return }
    write(profile, of: session) { $0 }
}

/// Writes the session's profile, invocations and summary, each file under the name `named` gives it.
private func write(_ profile: Profile, of session: PreloadSession, named: (String) -> String) {
    var written: [String] = []
    for target in session.settings.outputs {
        do {
            try profile.write(to: named(target.path), format: target.format, options: session.settings.options)
            written.append(named(target.path))
        } catch {
            report("\(error)")
        }
    }
    if let path = session.settings.invocations.outputPath.map(named) {
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
        StandardError.write(text)
    } else {
        writeText(text, to: named(summaryPath))
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
    StandardError.report(message)
}
