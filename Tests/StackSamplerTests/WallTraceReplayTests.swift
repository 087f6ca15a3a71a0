import Foundation
import Testing
@testable import StackSampler

/// Wall mode's accounting run again without a kernel, as any user and in milliseconds, on
/// traces of the invocations program recorded in the settings users run it in
/// (`Tests/StackSamplerTests/WallTraces`, made by `Scripts/record-wall-traces.sh`): a change to
/// how ticks are counted is checked here against what the program measured of itself.
@Suite struct WallTraceReplayTests {
    /// A recorded run: `NAME.trace` and `NAME.calls` (the program's own `call NAME MS` lines).
    struct RecordedRun: CustomStringConvertible, Sendable {
        var name: String
        /// Why the run cannot meet the band, where it is known not to (a limit in docs/limits.md).
        var knownShortfall: String?

        var description: String { name }

        private static let folder = (#filePath as NSString).deletingLastPathComponent + "/WallTraces/"

        /// The trace, read.
        func trace() throws -> WallTraceReplay { try WallTraceReplay(path: Self.folder + name + ".trace") }

        /// The program's own timing of its calls: total milliseconds and calls, by function.
        func measured() throws -> [String: (milliseconds: Double, calls: Int)] {
            let text = try String(contentsOfFile: Self.folder + name + ".calls", encoding: .utf8)
            var measured: [String: (milliseconds: Double, calls: Int)] = [:]
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard words.count == 3, words[0] == "call", let milliseconds = Double(words[2]) else { continue }
                measured[String(words[1]), default: (0, 0)].milliseconds += milliseconds
                measured[String(words[1]), default: (0, 0)].calls += 1
            }
            return measured
        }
    }

    static let runs = [
        RecordedRun(name: "invocations-root-10ms"),
        RecordedRun(name: "invocations-root-1ms-busy"),
        RecordedRun(name: "invocations-refused-10ms"),
        RecordedRun(name: "invocations-refused-1ms-busy",
                    knownShortfall: "with perf_event_open refused and every core busy, the CPU-time timers bring few samples of a running thread (docs/limits.md)"),
    ]

    @Test("the replay asks what the recorded session asked, and counts what it counted", arguments: runs)
    func replaysTheSession(run: RecordedRun) throws {
        let outcome = try run.trace().run()
        try #require(outcome.divergence == nil, "\(outcome.divergence ?? "")")
        #expect(outcome.lost == outcome.recordedLost)
        #expect(outcome.countedTicks == outcome.recordedCounted)
    }

    @Test("every tick due is counted with a stack or counted lost", arguments: runs)
    func everyTickIsAccountedFor(run: RecordedRun) throws {
        // The program has one thread, attached before the first tick and alive past the last:
        // every tick a wake says is due for it is its own.
        let outcome = try run.trace().run()
        let lost = outcome.lost.values.reduce(0, +)
        #expect(outcome.countedTicks + lost == outcome.dueThreadTicks,
                "\(outcome.countedTicks) counted and \(lost) lost of \(outcome.dueThreadTicks) due")
    }

    @Test("each function's ticks add up to the time the program measured in it", arguments: runs)
    func ticksMatchTheProgramsTiming(run: RecordedRun) throws {
        let trace = try run.trace()
        let outcome = try trace.run()
        let period = Double(trace.periodNanoseconds) / 1e6
        let measured = try run.measured()
        try #require(measured.count == 7, "the calls file names \(measured.keys.sorted())")
        let check = {
            for (function, truth) in measured.sorted(by: { $0.key < $1.key }) {
                let counted = Double(outcome.ticks(in: function)) * period
                // The issue's bar for a call, max(10 %, 2 periods), summed over the calls.
                let allowed = max(0.10 * truth.milliseconds, 2 * period * Double(truth.calls))
                #expect(abs(counted - truth.milliseconds) <= allowed,
                        "\(function): \(counted) ms counted, \(truth.milliseconds) ms measured over \(truth.calls) calls (allowed ±\(allowed))")
            }
        }
        if let shortfall = run.knownShortfall { withKnownIssue(Comment(rawValue: shortfall)) { check() } } else { check() }
    }
}
