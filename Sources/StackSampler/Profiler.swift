import CEngine
import Glibc
import Synchronization

/// The process-wide profiler: `start` samples every thread of this process, `stop` returns the profile.
public enum Profiler {
    /// The running session and the process that started it: a child made by
    /// fork() inherits this memory but not the sampler thread, so a session
    /// of another pid is a parent's, discarded rather than joined.
    private struct Session: Sendable {
        var sampler: SamplerThread
        var ownerPID: pid_t
        var isOwn: Bool { ownerPID == getpid() }
    }

    private static let session = Mutex<Session?>(nil)

    /// Starts sampling all threads every `period` of CPU time (`.cpu`) or wall-clock time (`.wall`).
    public static func start(period: Duration = .milliseconds(10), mode: SamplingMode = .cpu) throws(ProfilerError) {
        try start(ProfilerConfiguration(period: period, mode: mode))
    }

    /// Starts sampling with a full configuration. Throws `.alreadyRunning` if a session is running.
    public static func start(_ configuration: ProfilerConfiguration) throws(ProfilerError) {
        let configuration = try configuration.validated()
        try session.withLock { (current: inout Session?) throws(ProfilerError) in
            guard current?.isOwn != true else { throw .alreadyRunning }
            var engine = ss_config(mode: configuration.mode == .cpu ? SS_MODE_CPU : SS_MODE_WALL,
                                   period_ns: configuration.periodNanoseconds,
                                   max_depth: UInt32(configuration.maxDepth),
                                   buffer_slots: UInt32(configuration.bufferSlots))
            switch ss_engine_init(&engine) {
            case Int32(SS_OK): break
            case Int32(SS_ERR_ALREADY_RUNNING): throw .alreadyRunning
            case Int32(SS_ERR_NO_SIGNAL): throw .noFreeSignal(configuration.mode)
            case Int32(SS_ERR_BAD_CONFIG): throw .invalidConfiguration("max depth and buffer size cannot change between sessions of one process")
            default: throw .invalidConfiguration("the engine could not reserve its buffer")
            }
            let sampler = SamplerThread(configuration: configuration)
            do throws(ProfilerError) {
                try sampler.start()
            } catch {
                ss_engine_stop()
                throw error
            }
            current = Session(sampler: sampler, ownerPID: getpid())
            ExecDuringSession.register(configuration)
        }
    }

    /// Whether a session is running.
    public static var isRunning: Bool { session.withLock { $0?.isOwn == true } }

    /// Stops sampling and returns the symbolized profile. Throws `.notRunning` without a session.
    public static func stop() throws(ProfilerError) -> Profile {
        let end = ss_now_ns()
        // The session stays locked until its sampler has drained the engine's buffer for the
        // last time: a `start` meanwhile would give the buffer a second reader.
        let (sampler, counted) = try session.withLock { (current: inout Session?) throws(ProfilerError) -> (SamplerThread, StackAggregator) in
            defer { current = nil }
            guard let running = current, running.isOwn else { throw .notRunning }
            return (running.sampler, running.sampler.finish())
        }
        return ProfileBuilder.build(from: counted, sampler: sampler, endNanoseconds: end)
    }
}
