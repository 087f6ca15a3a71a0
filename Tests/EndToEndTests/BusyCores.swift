import Glibc

/// Other processes that keep every core busy while a test runs: one spinning shell more than
/// there are cores, so that the profiled program waits for a core part of the time.
final class BusyCores {
    private var children: [pid_t] = []

    /// Starts the spinners.
    init() throws {
        let count = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) + 1
        for _ in 0..<count {
            var child: pid_t = 0
            let arguments = ["/bin/sh", "-c", "while :; do :; done"]
            var pointers = arguments.map { strdup($0) } + [nil]
            defer { for pointer in pointers { free(pointer) } }
            let status = posix_spawn(&child, "/bin/sh", nil, nil, &pointers, environ)
            guard status == 0 else {
                stop()
                throw HarnessError("cannot start a spinner: \(String(cString: strerror(status)))")
            }
            children.append(child)
        }
    }

    /// Stops the spinners and waits for them.
    func stop() {
        for child in children { kill(child, SIGKILL) }
        for child in children {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        children = []
    }

    deinit { stop() }
}
