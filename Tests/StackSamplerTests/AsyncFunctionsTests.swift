@testable import StackSampler
import Testing

/// Resume frames of async stacks that name the running async function itself are dropped, and
/// no other frame is.
@Suite struct AsyncFunctionsTests {
    /// A Swift frame at module offset `offset` in the function starting at `start`, named `full`.
    static func frame(_ full: String, offset: UInt, start: UInt) -> SymbolizedFrame {
        var frame = SymbolizedFrame(name: full, modulePath: "/bin/app", moduleOffset: offset, functionStart: start,
                                    kind: .swift, isResolved: true)
        frame.fullName = full
        return frame
    }

    static let outer = "app.outer() async -> ()"
    static let inner = "app.inner(Swift.Int) async -> Swift.Int"
    /// Root first: outer's resume function (entry + 1), inner's resume function, then the running
    /// inner partial function and a synchronous callee.
    static let frames: [UInt: SymbolizedFrame] = [
        0x101: frame("(1) await resume partial function for " + outer, offset: 0x101, start: 0x100),
        0x201: frame("(2) await resume partial function for " + inner, offset: 0x201, start: 0x200),
        0x234: frame("(1) suspend resume partial function for " + inner, offset: 0x234, start: 0x220),
        0x301: frame("app.outer() async -> ()", offset: 0x301, start: 0x300),
        0x410: frame("app.burn(Swift.Int) -> Swift.Int", offset: 0x410, start: 0x400),
    ]

    @Test("a resume function of the async function it calls goes")
    func selfResumeDropped() {
        let kept = AsyncFunctions.withoutSelfResumes([0x101, 0x201, 0x234, 0x410], frames: Self.frames)
        #expect(kept == [0x101, 0x234, 0x410])
    }

    @Test("resume functions of callers stay, and so do frames that are not resume functions")
    func callersKept() {
        #expect(AsyncFunctions.withoutSelfResumes([0x101, 0x234, 0x410], frames: Self.frames) == [0x101, 0x234, 0x410])
        #expect(Self.frames[0x234]?.isAsyncResume == false)
        #expect(Self.frames[0x410]?.asyncFunctionKey == nil)
        // An async function's entry and its partial functions are one function.
        #expect(Self.frames[0x101]?.asyncFunctionKey == Self.frames[0x301]?.asyncFunctionKey)
    }
}
