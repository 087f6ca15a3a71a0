import Foundation
import Testing
@testable import StackSampler

/// Burns CPU in a frame of its own until the thread has used `seconds` of CPU time.
@inline(never)
func burnInProfilerAPITest(seconds: Double) -> UInt64 {
    var spent = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent)
    let end = Double(spent.tv_sec) + Double(spent.tv_nsec) / 1e9 + seconds
    var value: UInt64 = 1
    repeat {
        for _ in 0..<50_000 { value = value &* 6364136223846793005 &+ 1442695040888963407 }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent)
    } while Double(spent.tv_sec) + Double(spent.tv_nsec) / 1e9 < end
    return value
}

/// The Swift API profiling the test process itself. One session at a time, so serialized.
@Suite(.serialized) struct ProfilerAPITests {
    @Test func stopWithoutStartIsAnError() {
        #expect(throws: ProfilerError.notRunning) { try Profiler.stop() }
    }

    @Test func startingTwiceIsAnErrorNotACrash() throws {
        try Profiler.start(period: .milliseconds(10), mode: .cpu)
        #expect(throws: ProfilerError.alreadyRunning) { try Profiler.start(period: .milliseconds(10), mode: .cpu) }
        #expect(Profiler.isRunning)
        _ = try Profiler.stop()
        #expect(!Profiler.isRunning)
    }

    @Test func badPeriodIsRejectedBeforeAnythingStarts() {
        #expect(throws: ProfilerError.self) { try Profiler.start(period: .microseconds(10), mode: .cpu) }
        #expect(!Profiler.isRunning)
    }

    @Test(arguments: SamplingMode.allCases)
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
