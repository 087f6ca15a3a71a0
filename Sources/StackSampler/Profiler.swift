import CEngineHeader
import Glibc
import Synchronization

/// The process-wide profiler: `start` samples every thread of this process, `stop` returns the profile.
public enum Profiler {
    /// The running session and the process that started it: a child made by
    /// fork() inherits this memory but not the sampler thread, so a session
    /// of another pid is a parent's, discarded rather than joined.
    private struct Session: Sendable {
        var sampler: SamplerThread
        /// Invocation tracking, when configured (also one of the sampler's consumers).
        var invocations: InvocationRecorder?
        /// The session's symbolizer, shared by invocations, stall reports and its profiles.
        var symbols: SessionSymbols
        var ownerPID: pid_t
        /// Tells this session from later ones, so that a `capture` ends only its own.
        var number: UInt64
        /// Continuous mode: builds each window's profile on a thread of its own.
        var windows: WindowBuilder?
        var isOwn: Bool { ownerPID == getpid() }
    }

    private static let session = Mutex<Session?>(nil)
    /// Sessions started in this process so far.
    private static let sessionsStarted = Atomic<UInt64>(0)

    /// Starts sampling all threads every `period` of CPU time (`.cpu`) or wall-clock time (`.wall`).
    public static func start(period: Duration = SessionSettings.period.defaultValue!, mode: SamplingMode = SessionSettings.mode.defaultValue!) throws(ProfilerError) {
        try start(ProfilerConfiguration(period: period, mode: mode))
    }

    /// Starts sampling with a full configuration. Throws `.alreadyRunning` if a session is running.
    public static func start(_ configuration: ProfilerConfiguration) throws(ProfilerError) {
        _ = try startSession(configuration)
    }

    /// Starts a continuous session: sampling goes on until `stop()`, and every `window` what was
    /// counted since the window before becomes a profile (`Profile.window` says which), handed to
    /// `onWindow` on a thread of the profiler's own. Memory stays bounded by one window: the
    /// session keeps no samples once their window is handed over. `stop()` returns the last,
    /// partial window. With invocations configured, each window also carries the calls that
    /// ended in it (`Profile.invocations`, at most `capacity` per window) and those still running
    /// at its end (`Profile.runningInvocations`). A raw recording cannot be combined with it. With no
    /// `onWindow`, windows are cut and dropped unnamed (no symbolization at all): the session is
    /// only read by `profileOfNext` (the daemon's endpoints).
    public static func startContinuous(_ configuration: ProfilerConfiguration, window: Duration,
                                       onWindow: (@Sendable (Profile) -> Void)?) throws(ProfilerError) {
        guard configuration.recordingPath == nil else {
            throw .invalidConfiguration("continuous windows cannot be combined with a raw recording")
        }
        guard window >= .milliseconds(100) else { throw .invalidConfiguration("a window must last at least 100ms") }
        _ = try startSession(configuration, windows: (window.wholeNanoseconds, onWindow))
    }

    /// Starts a session, continuous with `windows`; returns its number.
    static func startSession(_ configuration: ProfilerConfiguration,
                             windows: (nanoseconds: UInt64, onWindow: (@Sendable (Profile) -> Void)?)? = nil) throws(ProfilerError) -> UInt64 {
        let configuration = try configuration.validated()
        return try session.withLock { (current: inout Session?) throws(ProfilerError) -> UInt64 in
            guard current?.isOwn != true else { throw .alreadyRunning }
            var engine = ss_config(mode: configuration.mode == .cpu ? SS_MODE_CPU : SS_MODE_WALL,
                                   period_ns: configuration.periodNanoseconds,
                                   max_depth: UInt32(configuration.maxDepth),
                                   buffer_slots: UInt32(configuration.bufferSlots),
                                   engine: configuration.engine == .perf ? SS_ENGINE_PERF
                                       : configuration.engine == .timer ? SS_ENGINE_TIMERS : SS_ENGINE_AUTOMATIC,
                                   event_type: configuration.event?.perfEvent.type ?? 0,
                                   event_config: configuration.event?.perfEvent.config ?? 0,
                                   event_period: configuration.event == nil ? 0 : UInt64(configuration.eventPeriod))
            switch ss_engine_init(&engine) {
            case Int32(SS_OK): break
            case Int32(SS_ERR_ALREADY_RUNNING): throw .alreadyRunning
            case Int32(SS_ERR_NO_SIGNAL): throw .noFreeSignal(configuration.mode)
            case Int32(SS_ERR_BAD_CONFIG): throw .invalidConfiguration("max depth and buffer size cannot change between sessions of one process")
            case Int32(SS_ERR_ENGINE_UNAVAILABLE):
                let reason = String(cString: ss_engine_description())
                if let event = configuration.event {
                    throw .invalidConfiguration("the event \(event.rawValue) cannot be counted here (\(reason)\(event.perfEvent.type == 0 ? "; hardware events need a PMU, which virtual machines often lack" : ""))")
                }
                throw .invalidConfiguration("the perf engine cannot run here (\(reason)); use the timer or auto engine")
            default: throw .invalidConfiguration("the engine could not reserve its buffer")
            }
            let startTime = ss_now_ns()
            let symbols = SessionSymbols(options: configuration.symbols)
            let sampler: SamplerThread
            let invocations: InvocationRecorder?
            let builder = windows.flatMap { windows in
                windows.onWindow.map { WindowBuilder(configuration: configuration, symbols: symbols, lengthNanoseconds: windows.nanoseconds, onWindow: $0) }
            }
            do throws(ProfilerError) {
                let stream = try configuration.recordingPath.map { path throws(ProfilerError) in try RawStreamWriter(path: path) }
                stream?.begin(configuration: configuration, startNanoseconds: startTime)
                invocations = try configuration.invocations.map { settings throws(ProfilerError) in
                    try InvocationRecorder(settings: settings, period: configuration.periodNanoseconds, mode: configuration.mode, symbols: symbols)
                }
                sampler = SamplerThread(configuration: configuration, consumers: [stream as (any SampleConsumer)?, invocations].compactMap { $0 },
                                        window: windows.map { windows in (windows.nanoseconds, { builder?.deliver($0) }) })
                try builder?.start()
                do throws(ProfilerError) {
                    try sampler.start(at: startTime)
                } catch {
                    _ = builder?.finish()
                    throw error
                }
            } catch {
                ss_engine_stop()
                throw error
            }
            let number = sessionsStarted.add(1, ordering: .relaxed).newValue
            current = Session(sampler: sampler, invocations: invocations, symbols: symbols, ownerPID: getpid(), number: number, windows: builder)
            ExecDuringSession.register(configuration)
            return number
        }
    }

    /// Whether a session is running.
    public static var isRunning: Bool { session.withLock { $0?.isOwn == true } }

    /// Stops sampling and returns the symbolized profile. Throws `.notRunning` without a session.
    public static func stop() throws(ProfilerError) -> Profile {
        try stopSession(number: nil)
    }

    /// Stops sampling, as `stop()`, for a caller that began to stop the session at `asked`
    /// (monotonic ns) and has run the profiler's own code since (an exit handler): the session
    /// ends there.
    package static func stop(since asked: UInt64) throws(ProfilerError) -> Profile {
        try stopSession(number: nil, since: asked)
    }

    /// Stops the running session if it is session `number` (any session if nil), ending it at
    /// `asked` (now if nil).
    static func stopSession(number: UInt64?, since asked: UInt64? = nil) throws(ProfilerError) -> Profile {
        let end = asked ?? ss_now_ns()
        // What this thread does from here on is the profiler's work, not the program's.
        let wasExcluded = ss_thread_set_excluded(1)
        defer { ss_thread_set_excluded(wasExcluded) }
        // The session stays locked until its sampler has drained the engine's buffer for the
        // last time: a `start` meanwhile would give the buffer a second reader.
        var (running, counted) = try session.withLock { (current: inout Session?) throws(ProfilerError) -> (Session, CountedSpan) in
            guard let running = current else { throw .notRunning }
            guard running.isOwn else {
                current = nil // a parent's session, inherited through fork(): discarded
                throw .notRunning
            }
            guard number == nil || running.number == number else { throw .notRunning }
            current = nil
            return (running, running.sampler.finish(at: end))
        }
        // Windows already handed over are built first; the partial one is this profile.
        let lastWindow = running.windows?.finish()
            ?? running.sampler.windowNanoseconds.map { Profile.Window(index: running.sampler.windowsCut + 1, lengthNanoseconds: $0) }
        counted.calls = running.invocations?.takeCalls()
        var profile = ProfileBuilder.build(counted, configuration: running.sampler.configuration, symbols: running.symbols)
        profile.window = lastWindow
        // Naming read whole symbol tables, freed by now; malloc would keep their pages, and a
        // service that profiles every few seconds would see its resident size creep up.
        ss_release_free_memory()
        return profile
    }

    /// The running session's profile so far, without stopping it: every sample taken up to now
    /// (the buffer is drained first), named; in a continuous session, since the last window.
    /// Invocations are left out (they are still open).
    /// Throws `.notRunning` without a session.
    public static func snapshot() throws(ProfilerError) -> Profile {
        let end = ss_now_ns()
        let (running, counted) = try session.withLock { (current: inout Session?) throws(ProfilerError) in
            guard let running = current, running.isOwn else { throw ProfilerError.notRunning }
            return (running, running.sampler.snapshot(at: end))
        }
        return ProfileBuilder.build(counted, configuration: running.sampler.configuration, symbols: running.symbols)
    }

    /// The profile of the next `duration` of the running session, taken beside it: the session's
    /// own counts and windows go on undisturbed. Blocks the calling thread for `duration`; call
    /// it on a thread of the profiler's own (`ProfilerThreads.enter()`). Throws `.notRunning`
    /// without a session, or if the session ends first.
    package static func profileOfNext(_ duration: Duration) throws(ProfilerError) -> Profile {
        let (running, span) = try session.withLock { (current: inout Session?) throws(ProfilerError) in
            guard let running = current, running.isOwn else { throw ProfilerError.notRunning }
            return (running, running.sampler.beginSpan(at: ss_now_ns()))
        }
        let deadline = span.startNanoseconds &+ duration.wholeNanoseconds
        sleepUntil(monotonicNanoseconds: deadline)
        let counted = try session.withLock { (current: inout Session?) throws(ProfilerError) in
            guard let current, current.number == running.number, current.isOwn else { throw ProfilerError.notRunning }
            return running.sampler.endSpan(span, at: ss_now_ns())
        }
        return ProfileBuilder.build(counted, configuration: running.sampler.configuration, symbols: running.symbols)
    }

    /// A session of `duration` with `configuration`, started now and stopped at its end: the
    /// profile of a request in a process that is not sampling. Blocks the calling thread; throws
    /// `.alreadyRunning` if a session runs (take `profileOfNext` then).
    package static func profileOnDemand(for duration: Duration, _ configuration: ProfilerConfiguration) throws(ProfilerError) -> Profile {
        let number = try startSession(configuration)
        let deadline = ss_now_ns() &+ duration.wholeNanoseconds
        sleepUntil(monotonicNanoseconds: deadline)
        return try stopSession(number: number)
    }

    /// The running session's settings, or nil without one.
    public static var runningConfiguration: ProfilerConfiguration? {
        session.withLock { $0?.isOwn == true ? $0?.sampler.configuration : nil }
    }
}
