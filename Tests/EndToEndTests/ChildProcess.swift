import Foundation

/// How a child process ended.
enum Termination: Equatable, CustomStringConvertible {
    /// It exited with this status.
    case exited(Int32)
    /// A signal with this number killed it.
    case signaled(Int32)

    /// `exit 7` or `signal 9`.
    var description: String {
        switch self {
        case .exited(let status): "exit \(status)"
        case .signaled(let signal): "signal \(signal)"
        }
    }
}

/// What a finished child process left behind.
struct ProcessResult: CustomStringConvertible {
    /// The child's process id (with the preload library, the profiled process's pid).
    let pid: pid_t
    /// How it ended.
    let termination: Termination
    /// Everything it wrote on standard output.
    let stdout: String
    /// Everything it wrote on standard error.
    let stderr: String

    /// The standard error lines, without empty ones.
    var stderrLines: [String] {
        stderr.split(separator: "\n").map(String.init)
    }

    /// A summary for failure messages: how it ended and both outputs.
    var description: String {
        "\(termination)\n--- stdout ---\n\(stdout)--- stderr ---\n\(stderr)--------------"
    }
}

/// Runs one command to completion, with a time limit, outside any shell.
///
/// Standard output and error go to files (no pipe can fill up and stall the child), standard
/// input is /dev/null. The child leads a process group of its own, with default signal
/// dispositions and an empty signal mask whatever the test runner uses, and the whole group
/// is killed when the time limit passes.
enum ChildProcess {
    /// Runs `executable` (looked up on PATH when it has no slash) with `arguments`.
    ///
    /// The child's environment is the test runner's, minus `LD_PRELOAD` and every
    /// `STACKSAMPLER_*` variable, plus `environment`. Its output files go to `directory`.
    /// Throws if it cannot start or outlives `timeout`.
    static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = [:],
        in directory: String,
        timeout: Duration = .seconds(60)
    ) throws -> ProcessResult {
        let name = "\((executable as NSString).lastPathComponent)-\(UUID().uuidString.prefix(8))"
        let stdoutPath = directory + "/" + name + ".stdout"
        let stderrPath = directory + "/" + name + ".stderr"
        let pid = try spawn(executable, arguments, environment: childEnvironment(adding: environment),
                            stdoutPath: stdoutPath, stderrPath: stderrPath)
        let termination = try wait(for: pid, timeout: timeout) {
            "\(executable) \(arguments.joined(separator: " ")) still running after \(timeout); killed.\n"
                + "stdout: \(read(stdoutPath))\nstderr: \(read(stderrPath))"
        }
        return ProcessResult(pid: pid, termination: termination, stdout: read(stdoutPath), stderr: read(stderrPath))
    }

    /// The runner's environment without profiler settings, with `extra` on top.
    private static func childEnvironment(adding extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { key, _ in
            key != "LD_PRELOAD" && !key.hasPrefix("STACKSAMPLER_")
        }
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Starts the child with posix_spawnp and returns its pid.
    private static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdoutPath: String, stderrPath: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var allSignals = sigset_t()
        var noSignals = sigset_t()
        sigfillset(&allSignals)
        sigemptyset(&noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = cStrings([executable] + arguments)
        let envp = cStrings(environment.map { "\($0.key)=\($0.value)" })
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let error = posix_spawnp(&pid, executable, &actions, &attributes, argv + [nil], envp + [nil])
        guard error == 0 else {
            throw HarnessError("cannot start \(executable): \(String(cString: strerror(error)))")
        }
        return pid
    }

    /// Waits for `pid`; past `timeout`, kills its process group and throws `timeoutMessage()`.
    private static func wait(
        for pid: pid_t, timeout: Duration, timeoutMessage: () -> String
    ) throws -> Termination {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return termination(fromWaitStatus: status) }
            if reaped < 0 && errno != EINTR {
                throw HarnessError("waitpid(\(pid)) failed: \(String(cString: strerror(errno)))")
            }
            if clock.now >= deadline {
                kill(-pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                throw HarnessError(timeoutMessage())
            }
            usleep(5_000)
        }
    }

    /// Decodes a waitpid status (the WIFEXITED / WEXITSTATUS / WTERMSIG macros).
    private static func termination(fromWaitStatus status: Int32) -> Termination {
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }

    /// NUL-terminated copies of `strings`, to be freed by the caller.
    private static func cStrings(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { strdup($0) }
    }

    /// The contents of a captured output file (empty if unreadable).
    private static func read(_ path: String) -> String {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
