import Foundation
import Synchronization
import Testing
@testable import StackSampler

/// Continuous sessions and request spans through the Swift API, in the test process itself: part
/// of ProfilerAPITests, whose tests run one at a time (the process has one profiler).
extension ProfilerAPITests {
    /// Samples of frames named `burnInProfilerAPITest` in `profile`.
    static func burnSamples(_ profile: Profile) -> Int {
        profile.stacks.filter { stack in stack.addresses.contains { profile.name(of: $0).contains("burnInProfilerAPITest") } }
            .reduce(0) { $0 + $1.count }
    }

    @Test("a continuous session hands over consecutive whole windows, and stop() returns the partial last one")
    func continuousWindows() throws {
        let windows = Mutex<[Profile]>([])
        var configuration = ProfilerConfiguration(period: .milliseconds(5), mode: .cpu)
        configuration.engine = .timer
        try Profiler.startContinuous(configuration, window: .milliseconds(200)) { profile in
            windows.withLock { $0.append(profile) }
        }
        #expect(throws: ProfilerError.alreadyRunning) { try Profiler.start(period: .milliseconds(10)) }
        let started = Date()
        _ = burnInProfilerAPITest(seconds: 1.0)
        let elapsed = Date().timeIntervalSince(started)
        let last = try Profiler.stop()
        let handed = windows.withLock { $0 }
        let all = handed + [last]
        #expect(all.map { $0.window?.index } == Array(1...all.count).map { Optional($0) }, "window indices \(all.map { $0.window?.index })")
        // 200 ms windows over `elapsed` seconds: the sampler cuts at its first wake after each end.
        #expect(Double(handed.count) >= elapsed / 0.2 - 2, "\(handed.count) windows in \(elapsed) s")
        for (earlier, later) in zip(all, all.dropFirst()) {
            let gap = Int64(later.realtimeStartNanoseconds) - Int64(earlier.realtimeStartNanoseconds + earlier.durationNanoseconds)
            #expect(abs(gap) < 2_000_000, "windows \(earlier.window!.index) and \(later.window!.index) are \(gap) ns apart: they must abut")
        }
        for window in handed {
            #expect(window.durationNanoseconds >= 200_000_000 && window.durationNanoseconds < 450_000_000, "\(window.durationNanoseconds)")
            #expect(window.threads.reduce(0) { $0 + $1.samples } == Self.total(window), "window \(window.window!.index): thread totals differ")
        }
        let burn = all.reduce(0) { $0 + Self.burnSamples($1) }
        // 1 s of CPU at 5 ms; timers fire at scheduler ticks (4 ms), so 200 is the most expected.
        #expect(burn >= 120 && burn <= 230, "burn samples over all windows: \(burn)")
        #expect(!Profiler.isRunning)
    }

    @Test("a request's span during a continuous session counts its own time, and the windows go on undisturbed")
    func spanBesideContinuousSession() throws {
        let windows = Mutex<[Profile]>([])
        try Profiler.startContinuous(ProfilerConfiguration(period: .milliseconds(10), mode: .wall), window: .seconds(30)) { profile in
            windows.withLock { $0.append(profile) }
        }
        let span = Mutex<Result<Profile, ProfilerError>?>(nil)
        let requesterTID = Atomic<Int32>(0)
        let requester = Thread {
            ProfilerThreads.enter()
            defer { ProfilerThreads.leave() }
            requesterTID.store(Int32(gettid()), ordering: .relaxed)
            span.withLock { $0 = Result { () throws(ProfilerError) in try Profiler.profileOfNext(.milliseconds(400)) } }
        }
        requester.start()
        _ = burnInProfilerAPITest(seconds: 0.7)
        while !requester.isFinished { usleep(1000) }
        let whole = try Profiler.stop()
        let taken = try #require(span.withLock { $0 }).get()
        #expect(taken.window == nil)
        #expect(taken.durationNanoseconds >= 400_000_000 && taken.durationNanoseconds < 700_000_000)
        // Wall mode at 10 ms: about 40 ticks of the burning thread in 400 ms.
        let spanBurn = Self.burnSamples(taken)
        #expect(spanBurn >= 20 && spanBurn <= 48, "span burn samples \(spanBurn)")
        #expect(Self.burnSamples(whole) >= spanBurn + 15, "the session's own counts lost the span's samples")
        #expect(windows.withLock { $0.isEmpty })
        #expect(whole.window?.index == 1)
        // The requesting thread is the profiler's own while it waits: never sampled, even blocked (wall mode).
        let own = requesterTID.load(ordering: .relaxed)
        #expect(!taken.threads.contains { $0.id == own && $0.samples > 0 }, "the requester's own wait was sampled")
    }

    @Test("profileOfNext without a session is .notRunning; continuous windows refuse invocations and raw streams")
    func continuousMisuse() throws {
        #expect(throws: ProfilerError.notRunning) { try Profiler.profileOfNext(.milliseconds(10)) }
        var configuration = ProfilerConfiguration()
        configuration.recordingPath = "/tmp/never-written.raw"
        #expect(throws: ProfilerError.self) { try Profiler.startContinuous(configuration, window: .seconds(1)) { _ in } }
        #expect(throws: ProfilerError.self) { try Profiler.startContinuous(ProfilerConfiguration(), window: .milliseconds(10)) { _ in } }
        #expect(!Profiler.isRunning)
    }
}
