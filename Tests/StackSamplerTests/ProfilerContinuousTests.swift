import Foundation
import Synchronization
import Testing
import CEngineHeader
@testable import StackSampler
import TestSupport

/// Continuous sessions and request spans through the Swift API, in the test process itself: part
/// of ProfilerAPITests, whose tests run one at a time (the process has one profiler).
extension ProfilerAPITests {
    /// Samples of frames named `burnInProfilerAPITest` in `profile`.
    static func burnSamples(_ profile: Profile) -> Int {
        profile.stacks.filter { stack in stack.addresses.contains { profile.name(of: $0).contains("burnInProfilerAPITest") } }
            .reduce(0) { $0 + $1.count }
    }

    @Test("a continuous session hands over windows that abut, counts any it had to drop, and stop() returns the partial last one")
    func continuousWindows() throws {
        let windows = Mutex<[Profile]>([])
        var configuration = ProfilerConfiguration(period: .milliseconds(5), mode: .cpu)
        configuration.engine = .timer
        try Profiler.startContinuous(configuration, window: .milliseconds(300)) { profile in
            windows.withLock { $0.append(profile) }
        }
        #expect(throws: ProfilerError.alreadyRunning) { try Profiler.start(period: .milliseconds(10)) }
        let started = Date()
        _ = burnInProfilerAPITest(seconds: 2.0)
        let elapsed = Date().timeIntervalSince(started)
        let last = try Profiler.stop()
        let all = windows.withLock { $0 } + [last]
        let indices = all.compactMap { $0.window?.index }
        #expect(indices.count == all.count && indices.first == 1, "\(indices)")
        // The window thread names windows one at a time; while it is slow (the test process's
        // first window names a debug build's every module), at most two wait and older ones are
        // dropped: each profile says how many went before it.
        for (earlier, later) in zip(all, all.dropFirst()) {
            let skipped = later.window!.index - earlier.window!.index - 1
            #expect(skipped >= 0 && later.window!.droppedWindows == skipped, "windows \(indices), dropped \(all.map { $0.window!.droppedWindows })")
            guard skipped == 0 else { continue }
            let gap = Int64(later.realtimeStartNanoseconds) - Int64(earlier.realtimeStartNanoseconds + earlier.durationNanoseconds)
            #expect(abs(gap) < 2_000_000, "windows \(earlier.window!.index) and \(later.window!.index) are \(gap) ns apart: they must abut")
        }
        // Windows end at the sampler's first wake after each 300 ms mark (cpu mode wakes every 5 to 100 ms).
        #expect(Double(last.window!.index) >= elapsed / 0.3 - 1 && Double(last.window!.index) <= elapsed / 0.3 + 2,
                "\(last.window!.index) windows in \(elapsed) s")
        let burner = ss_current_tid()
        for window in all {
            #expect(window.threads.reduce(0) { $0 + $1.samples } == Self.total(window), "window \(window.window!.index): thread totals differ")
            // Per CPU-second of the burning thread in the window (the machine may be busy): 5 ms
            // periods, timers firing at 4 ms ticks, so from about 100 up to 250.
            let cpu = Double(window.threads.first { $0.id == burner }?.cpuNanoseconds ?? 0) / 1e9
            guard cpu >= 0.1 else { continue }
            let rate = Double(Self.burnSamples(window)) / cpu
            #expect(rate >= 80 && rate <= 270, "window \(window.window!.index): \(rate) burn samples per CPU-second")
        }
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
            requesterTID.store(ss_current_tid(), ordering: .relaxed)
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

    @Test("windows nobody reads are cut unnamed, and stop() says which window the last one is")
    func unreadWindows() throws {
        try Profiler.startContinuous(ProfilerConfiguration(period: .milliseconds(5), mode: .wall), window: .milliseconds(150), onWindow: nil)
        _ = burnInProfilerAPITest(seconds: 0.5)
        let last = try Profiler.stop()
        let index = try #require(last.window?.index)
        #expect(index >= 3, "the last window is window \(index) after about 0.5 s of 150 ms windows")
        #expect(last.durationNanoseconds < 300_000_000, "the last profile holds \(last.durationNanoseconds) ns: earlier windows were not cut")
    }

    @Test("profileOfNext without a session is .notRunning; continuous windows refuse raw streams")
    func continuousMisuse() throws {
        #expect(throws: ProfilerError.notRunning) { try Profiler.profileOfNext(.milliseconds(10)) }
        var configuration = ProfilerConfiguration()
        configuration.recordingPath = "/tmp/never-written.raw"
        #expect(throws: ProfilerError.self) { try Profiler.startContinuous(configuration, window: .seconds(1)) { _ in } }
        #expect(throws: ProfilerError.self) { try Profiler.startContinuous(ProfilerConfiguration(), window: .milliseconds(10)) { _ in } }
        #expect(!Profiler.isRunning)
    }
}
