import Foundation
import Glibc

/// A command started with posix_spawn, with default dispositions for the
/// signals the CLI itself ignores while it waits (Ctrl-C goes to the program).
struct ChildProcess {
    /// How the program ended.
    enum Ending: CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)

        /// The status a shell would report: the exit code, or 128 + signal.
        var shellStatus: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            }
        }

        var description: String {
            switch self {
            case .exited(let code): "exited with status \(code)"
            case .signalled(let signal): "was killed by signal \(signal) (\(String(cString: strsignal(signal))))"
            }
        }
    }

    /// Process id of the child.
    let pid: pid_t

    /// Starts `executable` with `arguments` (argv[0] first) and `environment`.
    static func spawn(executable: String, arguments: [String], environment: [String: String]) throws -> ChildProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGTERM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }

        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, nil, &attributes, argv, envp)
        guard status == 0 else {
            throw ValidationErrorText("cannot run \(executable): \(String(cString: strerror(status)))")
        }
        return ChildProcess(pid: pid)
    }

    /// Waits for the child to end.
    func waitForExit() -> Ending {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }
}

/// An error whose text is the whole message.
struct ValidationErrorText: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
