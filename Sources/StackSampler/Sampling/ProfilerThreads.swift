import CEngineHeader
import Glibc
import Synchronization

/// The profiler's own threads besides the sampler (the thread that ends a capture, the window
/// builder, the daemon's server and pusher threads): never attached, never sampled, never
/// walked, in every session of the process.
package enum ProfilerThreads {
    private static let registered = Mutex<Set<Int32>>([])

    /// Marks the calling thread as the profiler's own until `leave()`; call it first thing on the thread.
    package static func enter() {
        ss_thread_exclude_current()
        let tid = ss_current_tid()
        registered.withLock { _ = $0.insert(tid) }
        ss_thread_detach(tid)
    }

    /// The calling thread is no longer the profiler's (it ends, and its tid may be another
    /// thread's next, or it goes back to the program's work).
    package static func leave() {
        let tid = ss_current_tid()
        registered.withLock { _ = $0.remove(tid) }
        ss_thread_set_excluded(0)
    }

    /// Names the calling thread, one of the profiler's own (`spawn`): so that whoever lists
    /// the program's threads can tell the profiler's apart. The kernel keeps 15 bytes.
    static func name(_ name: String) {
        ss_thread_set_own_name(name)
    }

    /// The profiler's threads now.
    static var all: Set<Int32> { registered.withLock { $0 } }
}

extension ProfilerThreads {
    /// Starts a thread of the profiler's own named `name` (at most 15 bytes, `ss-` first, as
    /// `top -H`, `perf` and debuggers show it) that runs `body`, with every signal blocked, and
    /// returns once the thread is registered (so no scan can take it for the program's).
    /// Join it (`pthread_join`) or detach it.
    package static func spawn(named name: String, _ body: @escaping @Sendable () -> Void) throws(ProfilerError) -> pthread_t {
        let start = ThreadStart(name: name, body)
        let context = Unmanaged.passRetained(start).toOpaque()
        var handle = pthread_t()
        let status = ss_spawn_unsampled_thread(&handle, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            ProfilerThreads.enter()
            defer { ProfilerThreads.leave() }
            ProfilerThreads.name(start.name)
            sem_post(start.registered)
            start.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(context).release()
            throw .invalidConfiguration("cannot start a profiler thread: \(String(cString: strerror(status)))")
        }
        while sem_wait(start.registered) != 0 && errno == EINTR {}
        return handle
    }
}

/// What a new profiler thread runs, its name, and the semaphore it posts once registered.
private final class ThreadStart: @unchecked Sendable {
    let name: String
    let body: @Sendable () -> Void
    let registered = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
        sem_init(registered, 0, 0)
    }

    deinit {
        sem_destroy(registered)
        registered.deallocate()
    }
}
