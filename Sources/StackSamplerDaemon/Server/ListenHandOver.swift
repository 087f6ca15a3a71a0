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
        let spawned = try? ProfilerThreads.spawn { [self] in
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

/// A wait that `stop()` ends at once (a condition variable: Synchronization has none).
private final class StopWait: @unchecked Sendable {
    // @unchecked: the mutex and condition live as long as the object and are used only through pthread.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var isStopped = false

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    /// Waits up to `milliseconds`; whether `stop()` was called.
    func stopped(afterMilliseconds milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanoseconds = Int(deadline.tv_nsec) + milliseconds * 1_000_000
        deadline.tv_sec += nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if !isStopped { pthread_cond_timedwait(condition, mutex, &deadline) }
        return isStopped
    }

    func stop() {
        pthread_mutex_lock(mutex)
        isStopped = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }
}
