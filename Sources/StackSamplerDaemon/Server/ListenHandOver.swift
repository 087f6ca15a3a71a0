import CEngineHeader
import Glibc
import StackSampler
import Synchronization

/// The listen addresses (`STACKSAMPLER_LISTEN`) of a forked child's daemon. The parent that bound
/// them keeps them while it lives (the child closed its inherited copies at the fork, so that no
/// process holds an address it does not answer); the child binds them once its parent is gone.
/// So a daemonizing service (fork, parent exits) is served at its address by the process that
/// lives, and the workers of a pre-fork server, whose master lives, are served on their own
/// default sockets. A profiler thread looks at the parent every 250 ms (`getppid`: no descriptor,
/// no signal) until then, and ends at `stop()` without waiting for its next look.
final class ListenHandOver: Sendable {
    private let wait = StopWait()
    private let thread = Mutex<pthread_t?>(nil)
    private let server = Mutex<ProfileServer?>(nil)

    /// Starts watching `parent`; once it is gone, `open` makes the server of the addresses (its
    /// error said on standard error).
    init(parent: pid_t, open: @escaping @Sendable () throws(ProfileServerError) -> ProfileServer) {
        let spawned = try? ProfilerThreads.spawn(named: "ss-parent-watch") { [self] in
            while getppid() == parent {
                if wait.stopped(afterMilliseconds: 250) { return }
            }
            do {
                let opened = try open()
                server.withLock { $0 = opened }
            } catch {
                StandardError.report("\(error); the listen address is not served by process \(getpid()) after its parent \(parent) ended")
            }
        }
        thread.withLock { $0 = spawned }
        if spawned == nil { StandardError.report("cannot start a thread to take the listen address when parent \(parent) ends") }
    }

    /// The addresses served, once taken.
    var addresses: [String] { server.withLock { $0?.addresses ?? [] } }

    /// Stops watching, and stops serving the addresses if they were taken.
    func stop() {
        wait.stop()
        if let running = thread.withLock({ value -> pthread_t? in defer { value = nil }; return value }) { pthread_join(running, nil) }
        server.withLock { $0 }?.stop()
    }
}

/// A wait that `stop()` ends at once.
private final class StopWait: @unchecked Sendable {
    // @unchecked: `isStopped` is read and written only under `lock`.
    private let lock = WaitLock()
    private var isStopped = false

    /// Waits up to `milliseconds`; whether `stop()` was called.
    func stopped(afterMilliseconds milliseconds: Int) -> Bool {
        let deadline = ss_now_ns() &+ UInt64(milliseconds) * 1_000_000
        return lock.withLock {
            if !isStopped { lock.wait(until: deadline) }
            return isStopped
        }
    }

    /// Ends every wait, now and later.
    func stop() {
        lock.withLock {
            isStopped = true
            lock.broadcast()
        }
    }
}
