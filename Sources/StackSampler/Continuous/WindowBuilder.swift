import CEngineHeader
import Glibc
import Synchronization

/// Continuous mode: turns each window the sampler hands over into a profile, on a thread of the
/// profiler's own (naming reads symbol tables, which must never hold up the sampler's drains),
/// and hands it to the session's `onWindow`. At most two windows wait; older ones are dropped,
/// and the next profile says how many.
final class WindowBuilder: @unchecked Sendable {
    /// The configured window length, in ns.
    let lengthNanoseconds: UInt64
    private let configuration: ProfilerConfiguration
    private let symbols: SessionSymbols
    private let onWindow: @Sendable (Profile) -> Void

    private struct Queue {
        var pending: [CountedSpan] = []
        var finishing = false
        /// Windows handed over so far, built or dropped.
        var delivered = 0
        /// Windows dropped since the last profile was built.
        var dropped = 0
        /// CPU the builder spent on its last window (naming, and what `onWindow` did), in ns.
        var lastWindowNanoseconds: UInt64 = 0
    }

    private static let maximumPending = 2
    private let queue = Mutex(Queue())
    /// Posted by the sampler for each window and once to finish; the builder thread waits on it.
    private let wakeup = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private var handle = pthread_t()

    init(configuration: ProfilerConfiguration, symbols: SessionSymbols, lengthNanoseconds: UInt64,
         onWindow: @escaping @Sendable (Profile) -> Void) {
        self.configuration = configuration
        self.symbols = symbols
        self.lengthNanoseconds = lengthNanoseconds
        self.onWindow = onWindow
        sem_init(wakeup, 0, 0)
    }

    deinit {
        sem_destroy(wakeup)
        wakeup.deallocate()
    }

    /// Starts the builder thread.
    func start() throws(ProfilerError) {
        handle = try ProfilerThreads.spawn(named: "ss-windows") { [self] in run() }
    }

    /// On the sampler thread: a window ended. Never waits for the builder.
    func deliver(_ window: CountedSpan) {
        queue.withLock { queue in
            queue.delivered += 1
            if queue.pending.count == Self.maximumPending {
                queue.pending.removeFirst()
                queue.dropped += 1
            }
            queue.pending.append(window)
        }
        sem_post(wakeup)
    }

    /// Builds the windows still waiting, ends the thread, and returns the description of the
    /// session's last, partial window (built by the caller).
    func finish() -> Profile.Window {
        queue.withLock { $0.finishing = true }
        sem_post(wakeup)
        pthread_join(handle, nil)
        return queue.withLock { queue in
            var window = Profile.Window(index: queue.delivered + 1, lengthNanoseconds: lengthNanoseconds)
            window.droppedWindows = queue.dropped
            window.previousDaemonNanoseconds = queue.lastWindowNanoseconds
            return window
        }
    }

    private func run() {
        let tid = ss_current_tid()
        while true {
            while sem_wait(wakeup) != 0 && errno == EINTR {}
            while let (span, window) = next() {
                let before = ss_thread_cpu_time_ns(tid)
                var profile = ProfileBuilder.build(span, configuration: configuration, symbols: symbols)
                profile.window = window
                onWindow(profile)
                // Naming read whole symbol tables: give their pages back, so a service's resident
                // size stays flat from window to window.
                ss_release_free_memory()
                let spent = UInt64(max(0, ss_thread_cpu_time_ns(tid) - before))
                queue.withLock { $0.lastWindowNanoseconds = spent }
            }
            if queue.withLock({ $0.finishing && $0.pending.isEmpty }) { return }
        }
    }

    /// The oldest window waiting, with its description; nil when none waits.
    private func next() -> (CountedSpan, Profile.Window)? {
        queue.withLock { queue in
            guard !queue.pending.isEmpty else { return nil }
            let span = queue.pending.removeFirst()
            var window = Profile.Window(index: queue.delivered - queue.pending.count, lengthNanoseconds: lengthNanoseconds)
            window.droppedWindows = queue.dropped
            window.previousDaemonNanoseconds = queue.lastWindowNanoseconds
            queue.dropped = 0
            return (span, window)
        }
    }
}
