import CEngineHeader
import Testing

/// The engine's walk of a Swift async context chain (Parent, ResumeParent) over synthetic
/// contexts in memory, read with a reader that cannot fault.
@Suite struct AsyncChainTests {
    /// Code addresses the engine's unwind tables cover, standing for resume functions.
    static let resumes: [UInt] = [
        unsafeBitCast(ss_now_ns as @convention(c) () -> UInt64, to: UInt.self),
        unsafeBitCast(ss_current_tid as @convention(c) () -> Int32, to: UInt.self),
        unsafeBitCast(ss_buffer_dropped as @convention(c) () -> UInt64, to: UInt.self),
    ]

    /// `count` contexts of two words each, context i's parent being context i + 1 and the last
    /// one the task's first context (parent 0); `change` may rewrite them before the walk.
    static func walk(contexts count: Int, capacity: Int = 16,
                     change: (UnsafeMutablePointer<UInt>) -> Void = { _ in }) -> (resumes: [UInt], outcome: Int32) {
        let words = UnsafeMutablePointer<UInt>.allocate(capacity: 2 * count)
        defer { words.deallocate() }
        for index in 0..<count {
            words[2 * index] = index + 1 < count ? UInt(bitPattern: words + 2 * (index + 1)) : 0
            words[2 * index + 1] = resumes[index % resumes.count]
        }
        change(words)
        ss_module_cache_refresh()
        var found = [UInt](repeating: 0, count: capacity)
        var outcome: Int32 = -1
        let written = ss_async_chain(UInt(bitPattern: words), ss_read_memory_checked, nil, &found, Int32(capacity), &outcome)
        return (Array(found.prefix(Int(written))), outcome)
    }

    @Test("a whole chain gives its resume functions innermost first, without the task's first context's")
    func wholeChain() {
        let (found, outcome) = Self.walk(contexts: 4)
        #expect(outcome == Int32(SS_ASYNC_COMPLETE))
        #expect(found == [Self.resumes[0], Self.resumes[1], Self.resumes[2]])
    }

    @Test("a parent pointer into unmapped memory ends the chain as unreadable")
    func faultingParent() {
        let (_, outcome) = Self.walk(contexts: 4) { words in words[2] = 0x10 }
        #expect(outcome == Int32(SS_ASYNC_UNREADABLE))
    }

    @Test("a misaligned parent pointer ends the chain as unreadable")
    func misalignedParent() {
        let (_, outcome) = Self.walk(contexts: 4) { words in words[0] = UInt(bitPattern: words + 2) + 3 }
        #expect(outcome == Int32(SS_ASYNC_UNREADABLE))
    }

    @Test("a chain that comes back to an earlier context is a cycle, found in a bounded walk")
    func cycle() {
        for loopStart in 0..<5 {
            let (found, outcome) = Self.walk(contexts: 6, capacity: 64) { words in
                words[2 * 5] = UInt(bitPattern: words + 2 * loopStart)
            }
            #expect(outcome == Int32(SS_ASYNC_CYCLE), "loop back to context \(loopStart)")
            #expect(found.count < 64)
        }
    }

    @Test("a resume function outside every module's code ends the chain")
    func resumeOutsideCode() {
        let (_, outcome) = Self.walk(contexts: 4) { words in words[3] = UInt(bitPattern: words) }
        #expect(outcome == Int32(SS_ASYNC_NOT_CODE))
    }

    @Test("a chain longer than the room given is too deep")
    func tooDeep() {
        let (found, outcome) = Self.walk(contexts: 6, capacity: 3)
        #expect(outcome == Int32(SS_ASYNC_TOO_DEEP))
        #expect(found.count == 3)
    }
}
