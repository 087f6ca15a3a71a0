import Foundation
import Synchronization
import Testing
@testable import StackSampler
import TestSupport

/// Repeated sessions, snapshots and captures through the Swift API, in the test process itself:
/// part of ProfilerAPITests, whose tests run one at a time (the process has one profiler).
extension ProfilerAPITests {
    /// POSIX timers of this process: only the profiler makes any here.
    static func timerCount() -> Int {
        let text = (try? String(contentsOfFile: "/proc/self/timers", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("ID:") }.count
    }

    /// Samples per (thread id, stack) of `profile`.
    static func countsByStack(_ profile: Profile) -> [String: Int] {
        var counts: [String: Int] = [:]
        for stack in profile.stacks {
            counts["\(profile.threads[stack.thread].id):\(stack.addresses)", default: 0] += stack.count
        }
        return counts
    }

    static func total(_ profile: Profile) -> Int { profile.stacks.reduce(0) { $0 + $1.count } }

    @Test("20 sessions in a row, threads made during and between them, leave no timer and each has samples")
    func sessionsInARow() throws {
        var withoutSamples = 0
        for index in 0..<20 {
            try Profiler.start(period: .milliseconds(1), mode: index % 2 == 0 ? .cpu : .wall)
            let during = Thread { _ = burnInProfilerAPITest(seconds: 0.001) }
            during.start()
            _ = burnInProfilerAPITest(seconds: 0.008)
            while !during.isFinished { usleep(1000) }
            let profile = try Profiler.stop()
            if Self.total(profile) == 0 { withoutSamples += 1 }
            #expect(profile.threads.reduce(0) { $0 + $1.samples } == Self.total(profile), "session \(index): thread totals differ from stack totals")
            #expect(profile.losses.droppedSamples == 0)
            #expect(Self.timerCount() == 0, "session \(index) left a timer")
            let between = Thread { _ = burnInProfilerAPITest(seconds: 0.001) }
            between.start()
            while !between.isFinished { usleep(1000) }
        }
        #expect(!Profiler.isRunning)
        // An 8 ms stretch sometimes meets no scheduler tick after its timer's expiry (cpu mode).
        #expect(withoutSamples <= 4, "\(withoutSamples) of 20 sessions had no sample")
    }

    @Test("a snapshot mid-session holds the samples so far, and the session goes on")
    func snapshotMidSession() throws {
        try Profiler.start(period: .milliseconds(5), mode: .wall)
        _ = burnInProfilerAPITest(seconds: 0.2)
        let snapshot = try Profiler.snapshot()
        #expect(Profiler.isRunning)
        _ = burnInProfilerAPITest(seconds: 0.2)
        let final = try Profiler.stop()

        let early = Self.countsByStack(snapshot), late = Self.countsByStack(final)
        #expect(Self.total(snapshot) > 0)
        #expect(Self.total(final) > Self.total(snapshot), "the session went on after the snapshot")
        for (stack, count) in early {
            #expect((late[stack] ?? 0) >= count, "stack \(stack): \(count) in the snapshot, \(late[stack] ?? 0) at the end")
        }
        // Every sample in the snapshot is on some thread's count, and no more.
        #expect(snapshot.threads.reduce(0) { $0 + $1.samples } == Self.total(snapshot))
        #expect(snapshot.invocations.isEmpty)
        #expect(throws: ProfilerError.notRunning) { try Profiler.snapshot() }
    }

    @Test("capture returns at once and hands over the profile on the profiler's own thread")
    func captureWithoutBlocking() throws {
        let delivered = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Profile, ProfilerError>?>(nil)
        let caller = pthread_self()
        let onCaller = Mutex(true)
        try Profiler.capture(for: .milliseconds(300), ProfilerConfiguration(period: .milliseconds(5), mode: .cpu)) { outcome in
            onCaller.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
            result.withLock { $0 = outcome }
            delivered.signal()
        }
        #expect(Profiler.isRunning, "capture returned while its session runs")
        _ = burnInProfilerAPITest(seconds: 0.15)
        delivered.wait()
        #expect(!Profiler.isRunning)
        #expect(onCaller.withLock { $0 } == false)
        let profile = try #require(try result.withLock { $0 }?.get())
        #expect(Self.total(profile) > 0)
        #expect(!profile.threads.contains { $0.blocksSignal }, "the capture's own thread is not in the session")
    }

    @Test("a capture stopped early reports notRunning and leaves the next session alone")
    func captureStoppedEarly() throws {
        let delivered = DispatchSemaphore(value: 0)
        let result = Mutex<Result<Profile, ProfilerError>?>(nil)
        try Profiler.capture(for: .milliseconds(100)) { outcome in
            result.withLock { $0 = outcome }
            delivered.signal()
        }
        _ = try Profiler.stop()
        try Profiler.start(period: .milliseconds(10), mode: .cpu)
        delivered.wait()
        #expect(Profiler.isRunning, "the capture did not stop a later session")
        _ = try Profiler.stop()
        #expect(throws: ProfilerError.notRunning) { try result.withLock { $0 }?.get() }
    }
}
