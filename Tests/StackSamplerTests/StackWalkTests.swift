import CEngineHeader
import Testing

/// The engine's stack walk called outside signal context, as the sampler thread would for a
/// thread stopped in a system call: on the current thread, with a reader that cannot fault.
@Suite struct StackWalkTests {
    /// Frames of the current stack from the call in this function, and how the walk ended.
    @inline(never)
    static func walkFromHere(reader: ss_memory_reader) -> (frames: [UInt], outcome: Int32) {
        var frames = [UInt](repeating: 0, count: 256)
        var outcome: Int32 = -1
        let count = ss_unwind_caller_stack(reader, nil, &frames, 256, &outcome)
        return (Array(frames.prefix(Int(count))), outcome)
    }

    /// The same walk one call deeper.
    @inline(never)
    static func walkOneDeeper() -> (frames: [UInt], outcome: Int32) {
        let walk = walkFromHere(reader: ss_read_memory_checked)
        return (walk.frames, walk.outcome + 0)
    }

    @Test("walks of the current thread reach its first frame and agree on the callers")
    func walksCurrentThread() {
        ss_module_cache_refresh()
        let here = Self.walkFromHere(reader: ss_read_memory_checked)
        let deeper = Self.walkOneDeeper()
        #expect(here.outcome == Int32(SS_WALK_COMPLETE), "frames: \(here.frames)")
        #expect(deeper.outcome == Int32(SS_WALK_COMPLETE), "frames: \(deeper.frames)")
        #expect(here.frames.count >= 4, "frames: \(here.frames)")
        // Below the two call sites in this test, both walks see the same callers.
        #expect(deeper.frames.count == here.frames.count + 1, "\(here.frames) vs \(deeper.frames)")
        #expect(Array(deeper.frames.dropFirst(3)) == Array(here.frames.dropFirst(2)), "\(here.frames) vs \(deeper.frames)")
    }

    @Test("a reader that fails ends the walk early, at the first frame")
    func failingReaderEndsEarly() {
        ss_module_cache_refresh()
        let (frames, outcome) = Self.walkFromHere(reader: { _, _, _ in -1 })
        #expect(outcome == Int32(SS_WALK_ENDED_EARLY))
        #expect(frames.count == 1)
    }

    @Test("a walk stops at the capacity it is given, marked truncated")
    func stopsAtCapacity() {
        ss_module_cache_refresh()
        var frames = [UInt](repeating: 0, count: 2)
        var outcome: Int32 = -1
        let count = ss_unwind_caller_stack(ss_read_memory_checked, nil, &frames, 2, &outcome)
        #expect(count == 2)
        #expect(outcome == Int32(SS_WALK_TRUNCATED))
    }
}
