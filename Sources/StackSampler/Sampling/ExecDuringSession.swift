import CEngineHeader
import Synchronization

/// What an exec does to a session started with `Profiler.start`: the engine's interposed exec
/// family calls these hooks (`ss_session_hooks`), so that no profiler signal reaches the new
/// image. The session stops before the exec (its profile is dropped: the image that would have
/// asked for it is being replaced) and starts again, with the same configuration, if the exec
/// fails. The preload library and the C API register hooks of their own after `start`, which
/// replace these; and these never replace theirs (a daemon's on-demand session took the preload
/// library's hooks away for good: an exec no longer stopped the daemon, and every child forked
/// from then on was silently unprofiled).
enum ExecDuringSession {
    /// The configuration of the running session, to start it again after a failed exec.
    private static let configuration = Mutex<ProfilerConfiguration?>(nil)

    /// Registers the hooks for a session just started with `configuration`, unless this process
    /// has hooks already (these, from a session before, or its owner's).
    static func register(_ configuration: ProfilerConfiguration) {
        Self.configuration.withLock { $0 = configuration }
        guard ss_session_hooks_registered() == 0 else { return }
        var hooks = ss_session_hooks(
            stop_for_exec: { (try? Profiler.stop()) == nil ? 0 : 1 },
            resume_after_failed_exec: {
                guard let configuration = ExecDuringSession.configuration.withLock({ $0 }) else { return }
                _ = try? Profiler.start(configuration)
            },
            start_in_forked_child: nil)
        ss_set_session_hooks(&hooks)
    }
}
