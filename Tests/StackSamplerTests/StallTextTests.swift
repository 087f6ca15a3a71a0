import Testing
@testable import StackSampler

@Suite struct StallTextTests {
    static let stall = Stall(thread: 0, frames: [Stall.Frame(address: 1, runningNanoseconds: 900_000_000),
                                                 Stall.Frame(address: 2, runningNanoseconds: 300_400_000),
                                                 Stall.Frame(address: 3, runningNanoseconds: 12_000_000)],
                             depth: 1, threshold: 250_000_000)
    static let names: [UInt: String] = [1: "main", 2: "load_config", 3: "read"]

    /// The headline names the deepest call past the threshold; the stack marks every frame past it.
    @Test("a stall report names the thread and the deepest call past the threshold, then lists the stack root first with each call's time, those past it marked")
    func namesTheDeepestCallPastTheThresholdAndListsTheStack() {
        let text = StallText.render(Self.stall, threadName: "ui", tid: 7, mode: .wall) { Self.names[$0]! }
        #expect(text == """
            stacksampler: stall on thread ui (tid 7): load_config has run for 300 ms (threshold 250 ms, wall-clock time); stack, root first:
            stacksampler: > 900 ms  main
            stacksampler: > 300 ms  load_config
            stacksampler:   12 ms  read

            """)
    }

    @Test("in cpu mode a stall report says that only on-CPU time is sampled")
    func cpuModeSaysWhatItCannotSee() {
        let text = StallText.render(Self.stall, threadName: "ui", tid: 7, mode: .cpu) { Self.names[$0]! }
        #expect(text.split(separator: "\n")[0].contains("only on-CPU time is sampled"))
    }
}
