import Glibc
import StackSampler

/// Where the daemon's endpoints get their profiles: the running session's samples of the next
/// `seconds` (a span of a continuous session), or an on-demand session of that length when none
/// runs. Called on a server thread, which it blocks for the span.
package protocol ProfileProvider: Sendable {
    /// The profile of the next `seconds` in `mode`; `.failure(.modeConflict)` when the process
    /// samples continuously in the other mode, `.failure(.busy)` while another span is being taken.
    func profile(seconds: Int, mode: SamplingMode) -> Result<Profile, ProfileRequestError>
    /// The calls of the next `seconds`: a profile whose `invocations` ended in the span and whose
    /// `runningInvocations` run at its end; `.failure(.unavailable)` when the running session tracks no invocations.
    func calls(seconds: Int) -> Result<Profile, ProfileRequestError>
    /// One line of JSON saying what the daemon does: mode, period, windows, cost, pushes.
    func status() -> String
}

/// Why a profile request was not served.
package enum ProfileRequestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The process samples continuously in `running` mode; a profile in the other mode cannot be taken meanwhile.
    case modeConflict(running: SamplingMode)
    /// Another profile request is being served (one at a time).
    case busy
    /// The profiler could not run (`reason` says why and what to do).
    case unavailable(String)

    package var description: String {
        switch self {
        case .modeConflict(let running):
            "this process samples continuously in \(running.rawValue) mode; ask for mode=\(running.rawValue), or start it with STACKSAMPLER_MODE set to the mode you need"
        case .busy: "another profile is being taken; one request at a time (try again when it ends)"
        case .unavailable(let reason): reason
        }
    }
}

/// The default per-process socket of a profiled process: `/tmp/stacksampler-UID/PID.sock`, in
/// a directory only that user can enter (mode 0700, owned by the user, not a link). The CLI
/// finds a process's socket by the same rule, from the pid and the process's owner.
package enum ServiceSocket {
    /// The directory holding the sockets of `uid`'s processes.
    package static func directory(uid: uid_t) -> String { "/tmp/stacksampler-\(uid)" }

    /// The default socket path of process `pid`, owned by `uid`.
    package static func defaultPath(pid: pid_t, uid: uid_t) -> String { "\(directory(uid: uid))/\(pid).sock" }
}
