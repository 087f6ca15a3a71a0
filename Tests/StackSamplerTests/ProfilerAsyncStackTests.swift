import Testing
@testable import StackSampler
import TestSupport

/// An async chain of the test process itself: apiOuter awaits apiMiddle, which awaits apiLeaf
/// twice, which burns CPU in a synchronous function.
@inline(never)
func apiLeaf(_ seconds: Double) async -> UInt64 {
    await Task.yield()
    return burnInProfilerAPITest(seconds: seconds)
}

@inline(never)
func apiMiddle(_ seconds: Double) async -> UInt64 {
    let first = await apiLeaf(seconds)
    return first &+ (await apiLeaf(seconds))
}

@inline(never)
func apiOuter(_ seconds: Double) async -> UInt64 {
    await apiMiddle(seconds) &+ 1
}

extension ProfilerAPITests {
    @Test("Profiler.start: samples of a Swift job carry its task's async callers", arguments: SamplingMode.allCases)
    func asyncCallersOfSwiftJobs(mode: SamplingMode) async throws {
        try Profiler.start(period: .milliseconds(2), mode: mode)
        _ = await Task.detached { await apiOuter(0.2) }.value
        let profile = try Profiler.stop()

        var underLeaf = 0, withCallers = 0
        for stack in profile.stacks {
            let names = stack.addresses.map { profile.frames[$0]?.name ?? "" }
            guard let burn = names.firstIndex(where: { $0.hasPrefix("burnInProfilerAPITest") }), burn >= 1,
                  names[burn - 1].hasPrefix("apiLeaf(") else { continue }
            underLeaf += stack.count
            if burn >= 3, names[burn - 3].hasPrefix("apiOuter("), names[burn - 2].hasPrefix("apiMiddle(") { withCallers += stack.count }
        }
        #expect(underLeaf >= 20, "\(profile.summary)")
        #expect(Double(withCallers) >= 0.95 * Double(underLeaf), "\(withCallers) of \(underLeaf)\n\(profile.summary)")
        #expect(profile.asyncStacks.recorded > 0, "\(profile.summary)")
    }
}
