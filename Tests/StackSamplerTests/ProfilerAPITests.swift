import Foundation
import Testing
@testable import StackSampler
import TestSupport

/// The Swift API profiling the test process itself. One session at a time, so serialized, and
/// apart from other test targets' sessions (`.profilerSession`).
@Suite(.serialized, .profilerSession) struct ProfilerAPITests {
    @Test("stop without a session throws notRunning")
    func stopWithoutStartIsAnError() {
        #expect(throws: ProfilerError.notRunning) { try Profiler.stop() }
    }

    @Test("a second start throws alreadyRunning, and the first session goes on")
    func startingTwiceIsAnErrorNotACrash() throws {
        try Profiler.start(period: .milliseconds(10), mode: .cpu)
        #expect(throws: ProfilerError.alreadyRunning) { try Profiler.start(period: .milliseconds(10), mode: .cpu) }
        #expect(Profiler.isRunning)
        _ = try Profiler.stop()
        #expect(!Profiler.isRunning)
    }

    @Test("a period out of range is refused before anything starts")
    func badPeriodIsRejectedBeforeAnythingStarts() {
        #expect(throws: ProfilerError.self) { try Profiler.start(period: .microseconds(10), mode: .cpu) }
        #expect(!Profiler.isRunning)
    }

    @Test("the calling thread and a thread started later are both sampled, whole stacks", arguments: SamplingMode.allCases)
    func samplesTheCallingThreadAndThreadsStartedLater(mode: SamplingMode) throws {
        try Profiler.start(period: .milliseconds(5), mode: mode)
        let worker = Thread {
            try? "api-worker".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            _ = burnInProfilerAPITest(seconds: 0.4)
        }
        worker.start()
        _ = burnInProfilerAPITest(seconds: 0.4)
        while !worker.isFinished { usleep(10_000) }
        let profile = try Profiler.stop()

        #expect(profile.configuration?.mode == mode)
        let burning = profile.stacks.filter { stack in
            stack.addresses.contains { profile.name(of: $0).contains("burnInProfilerAPITest") }
        }
        let burningThreads = Set(burning.map { profile.threads[$0.thread].id })
        // 0.4 s of CPU at 5 ms is about 80 samples per thread; 20 leaves room for a loaded machine.
        #expect(burning.reduce(0) { $0 + $1.count } >= 40)
        #expect(burningThreads.count == 2, "both the calling thread and the worker are sampled")
        #expect(profile.threads.contains { $0.name == "api-worker" })
        // A thread started after start() is prepared by the pthread_create hook: whole stacks, not leaves.
        #expect(burning.allSatisfy { $0.addresses.count > 1 })
        #expect(profile.losses.droppedSamples == 0)
        #expect(!profile.summary.isEmpty)
    }
}
