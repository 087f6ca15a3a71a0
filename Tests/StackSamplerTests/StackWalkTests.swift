import CSupport
import Glibc
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

    @Test("a walk of the current thread reaches its first frame through this function")
    func walksCurrentThread() {
        ss_module_cache_refresh()
        let (frames, outcome) = Self.walkFromHere(reader: ss_read_memory_checked)
        #expect(outcome == Int32(SS_WALK_COMPLETE), "frames: \(frames)")
        #expect(frames.count >= 4, "frames: \(frames)")
        var info = Dl_info()
        #expect(dladdr(UnsafeRawPointer(bitPattern: frames[0]), &info) != 0)
        if let name = info.dli_sname {
            #expect(String(cString: name).contains("walkFromHere"), "first frame: \(String(cString: name))")
        }
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
