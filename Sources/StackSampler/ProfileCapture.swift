import CEngineHeader
import Glibc

// Profiles of a given duration for services, without blocking the caller.
//
// A completion handler rather than an `async` function: the library does not import Swift
// Concurrency (see `lightSwift` in Package.swift), so that profiling a program never loads
// libswift_Concurrency into it. An async caller wraps `capture` in
// `withCheckedThrowingContinuation`; the completion runs on a thread of the profiler's own.

extension Profiler {
    /// Starts a session now and ends it after `duration` on a thread of the profiler's own,
    /// which then calls `completion` with the profile. Returns at once; throws as `start` does
    /// if the session cannot start. If the session is stopped some other way first (`stop()`),
    /// `completion` gets `.notRunning`, and a session started after that is left alone.
    public static func capture(
        for duration: Duration, _ configuration: ProfilerConfiguration = ProfilerConfiguration(),
        completion: @escaping @Sendable (Result<Profile, ProfilerError>) -> Void
    ) throws(ProfilerError) {
        guard duration > .zero else { throw .invalidConfiguration("a capture's duration must be positive") }
        let number = try startSession(configuration)
        let deadline = ss_now_ns() &+ duration.wholeNanoseconds
        let capture = PendingCapture(number: number, deadline: deadline, completion: completion)
        let handle: pthread_t
        do {
            handle = try ProfilerThreads.spawn(named: "ss-capture") { capture.run() }
        } catch {
            _ = try? stopSession(number: number)
            throw error
        }
        pthread_detach(handle)
    }
}

/// A capture waiting for its deadline on its own thread.
private final class PendingCapture: Sendable {
    let number: UInt64
    /// CLOCK_MONOTONIC time to stop at, in ns.
    let deadline: UInt64
    let completion: @Sendable (Result<Profile, ProfilerError>) -> Void

    init(number: UInt64, deadline: UInt64, completion: @escaping @Sendable (Result<Profile, ProfilerError>) -> Void) {
        self.number = number
        self.deadline = deadline
        self.completion = completion
    }

    /// Sleeps until the deadline, stops the session (if still this one) and hands over the profile.
    func run() {
        sleepUntil(monotonicNanoseconds: deadline)
        do throws(ProfilerError) {
            completion(.success(try Profiler.stopSession(number: number)))
        } catch {
            completion(.failure(error))
        }
    }
}
