import CEngineHeader
import Foundation
@testable import StackSampler

/// A wall trace (`WallTraceFormat`) run again through a new `WallScheduler`: its inputs handed
/// over in order, each probe answered from the trace. The scheduler must ask exactly what the
/// recorded one asked, in the same order; where it does not, the replay stops there and says
/// where (`divergence`): a change that makes the scheduler ask the kernel something else needs
/// the traces recorded again (`Scripts/record-wall-traces.sh`).
final class WallTraceReplay {
    /// What the replayed session counted, and how it compares with the recorded one.
    struct Outcome {
        /// The counts, as the session's routing took them.
        var routing: SampleRouting
        /// Ticks counted lost by the replay, by reason (`TickLoss` case names).
        var lost: [String: Int]
        /// Ticks the recorded session counted lost, by reason.
        var recordedLost: [String: Int]
        /// Ticks the recorded session counted with a stack.
        var recordedCounted: Int
        /// Ticks the wakes said were due, for each thread attached at them.
        var dueThreadTicks: Int
        /// Where the replay left the trace, if the scheduler asked something the trace does not hold.
        var divergence: String?
        /// The function name of each address of the trace's stacks.
        var names: [UInt: String]

        /// Ticks counted with a stack whose frames name `function` (each counted once however deep).
        func ticks(in function: String) -> Int {
            routing.aggregator.counts.reduce(0) { total, entry in
                entry.key.frames.contains { names[$0] == function } ? total + entry.value : total
            }
        }

        /// Ticks counted with a stack, of all threads.
        var countedTicks: Int { routing.aggregator.counts.values.reduce(0, +) }
    }

    /// A trace that cannot be read.
    struct Unreadable: Error, CustomStringConvertible {
        var description: String
    }

    private let lines: [[Substring]]
    private var stacks: [Int: [UInt]] = [:]
    private var names: [UInt: String] = [:]
    private var recordedLost: [String: Int] = [:]
    private var recordedCounted = -1
    /// The next line a probe's answer is read from.
    private var cursor = 0
    private var divergence: String?
    /// The trace's first line (`WallTraceFormat`).
    let header: [Substring]
    /// The tick of the recorded session, in ns.
    var periodNanoseconds: UInt64 { UInt64(header[2]) ?? 0 }

    /// The trace at `path`.
    init(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var kept: [[Substring]] = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", omittingEmptySubsequences: false)
            switch words.first {
            case "stack":
                guard words.count == 3, let id = Int(words[1]), let frames = WallTraceFormat.frames(words[2]) else {
                    throw Unreadable(description: "\(path): bad stack line: \(line)")
                }
                stacks[id] = frames
            case "name":
                guard words.count >= 3, let address = UInt(words[1], radix: 16) else { throw Unreadable(description: "\(path): bad name line: \(line)") }
                names[address] = words[2...].joined(separator: " ")
            case "counted":
                guard words.count == 2, let count = Int(words[1]) else { throw Unreadable(description: "\(path): bad counted line: \(line)") }
                recordedCounted = count
            case "lost":
                guard words.count == 3, let count = Int(words[2]) else { throw Unreadable(description: "\(path): bad lost line: \(line)") }
                recordedLost[String(words[1])] = count
            default:
                kept.append(words)
            }
        }
        guard let first = kept.first, first.count == 9, first[0] == WallTraceFormat.magic, first[1] == "\(WallTraceFormat.version)" else {
            throw Unreadable(description: "\(path) is not a wall trace of version \(WallTraceFormat.version)")
        }
        header = first
        lines = Array(kept.dropFirst())
    }

    /// Runs the trace through a new scheduler.
    func run() throws -> Outcome {
        let numbers = header[2...].compactMap { UInt64($0) }
        guard numbers.count == 7 else { throw Unreadable(description: "bad header: \(header.joined(separator: " "))") }
        let fixed = WallFixedFigures(cores: Int(numbers[2]), counterPeriod: numbers[3], seed: numbers[4],
                                     switchRingBound: Int(numbers[5]), preemptionRingBound: Int(numbers[6]))
        let probes = Probes(replay: self, fixed: fixed)
        let scheduler = WallScheduler(periodNanoseconds: numbers[0], bufferSlots: Int(numbers[1]), probes: probes)
        var routing = SampleRouting(consumers: [])
        var due = 0
        while cursor < lines.count, divergence == nil {
            let words = lines[cursor]
            cursor += 1
            let arguments = words.dropFirst()
            switch words[0] {
            case "wake":
                guard arguments.count == 4, let now = UInt64(words[1]), let ticks = Int(words[2]), let late = Int(words[3]) else { throw bad(words) }
                let threads = WallTraceFormat.items(words[4]).compactMap { Int32($0) }
                due += ticks * threads.count
                scheduler.wake(at: now, due: ticks, late: late, threads: threads[...], routing: &routing)
            case "route":
                guard arguments.count == 1, let sample = WallTraceFormat.sample(words[1], stacks: stacks) else { throw bad(words) }
                scheduler.route(sample, into: &routing)
            case "look":
                guard let tick = arguments.first.flatMap({ UInt64($0) }) else { throw bad(words) }
                scheduler.lookAtSleeps(at: tick)
            case "watch":
                guard arguments.count == 1 else { throw bad(words) }
                scheduler.watch(WallTraceFormat.items(words[1]).compactMap { Int32($0) }[...])
            case "ended":
                guard arguments.count == 1 else { throw bad(words) }
                let notes = try WallTraceFormat.items(words[1]).map { note in
                    let parts = note.split(separator: ":")
                    guard parts.count == 3, let tid = Int32(parts[0]), let cpu = Int64(parts[1]), let time = UInt64(parts[2]) else { throw bad(words) }
                    return ss_ended_thread(tid: tid, time_ns: time, cpu_ns: cpu)
                }
                scheduler.threadsEnded(notes)
            case "ending":
                guard let tid = arguments.first.flatMap({ Int32($0) }) else { throw bad(words) }
                scheduler.threadEnding(tid, routing: &routing)
                routing.threadEnded(tid)
            case "forget":
                guard let tid = arguments.first.flatMap({ Int32($0) }) else { throw bad(words) }
                scheduler.threadEnded(tid)
            case "settle": scheduler.settle(routing: &routing)
            case "finish": scheduler.finishing(routing: &routing)
            case "stop":
                guard arguments.count == 2, let tid = Int32(words[1]), let time = UInt64(words[2]) else { throw bad(words) }
                scheduler.stopping(tid, from: time)
            default:
                divergence = "line \(cursor + 1): the trace answers `\(words.joined(separator: " "))` that the scheduler did not ask"
            }
        }
        let lost = Dictionary(scheduler.lostTicks.map { ("\($0.key)", $0.value) }, uniquingKeysWith: +)
        return Outcome(routing: routing, lost: lost, recordedLost: recordedLost, recordedCounted: recordedCounted, dueThreadTicks: due, divergence: divergence, names: names)
    }

    private func bad(_ words: [Substring]) -> Unreadable {
        Unreadable(description: "line \(cursor + 1): cannot read `\(words.joined(separator: " "))`")
    }

    /// The words after `kind` and `arguments` on the next line, if that line is the answer to
    /// that question; else the replay has diverged (noted once) and nil.
    fileprivate func answer(_ kind: String, _ arguments: String...) -> [Substring]? { answer(kind, arguments: arguments) }

    /// `answer(_:_:)` with the arguments as an array.
    fileprivate func answer(_ kind: String, arguments: [String]) -> [Substring]? {
        guard divergence == nil else { return nil }
        let asked = ([kind] + arguments).joined(separator: " ")
        guard cursor < lines.count else {
            divergence = "end of trace: the scheduler asked `\(asked)`"
            return nil
        }
        let words = lines[cursor]
        guard words.count >= 1 + arguments.count, words[0] == kind, zip(words.dropFirst(), arguments).allSatisfy({ $0 == $1 }) else {
            divergence = "line \(cursor + 2): the scheduler asked `\(asked)`, the trace holds `\(words.joined(separator: " "))`"
            return nil
        }
        cursor += 1
        return Array(words.dropFirst(1 + arguments.count))
    }

    /// The stack a line names.
    fileprivate func stack(_ word: Substring) -> [UInt] { Int(word).flatMap { stacks[$0] } ?? [] }
    /// The sample a word is.
    fileprivate func sample(_ word: Substring) -> Sample? { WallTraceFormat.sample(word, stacks: stacks) }

    /// Answers the scheduler's questions from the trace.
    private final class Probes: WallProbes {
        let fixed: WallFixedFigures
        /// The replay owns the probes: they live only while it runs.
        private unowned let replay: WallTraceReplay

        init(replay: WallTraceReplay, fixed: WallFixedFigures) {
            self.replay = replay
            self.fixed = fixed
        }

        private func number<Number: FixedWidthInteger>(_ kind: String, _ arguments: String..., default value: Number) -> Number {
            let words = replay.answer(kind, arguments: arguments)
            return words?.first.flatMap { Number(String($0)) } ?? value
        }

        private func flag(_ kind: String, _ handle: OpaquePointer) -> Bool {
            replay.answer(kind, WallTraceFormat.word(handle))?.first == "1"
        }

        private static func handle(_ word: Substring?) -> OpaquePointer? { word.flatMap { UInt($0) }.flatMap { OpaquePointer(bitPattern: $0) } }

        func now() -> UInt64 { number("now", default: 0) }
        func sampleSpacing() -> Int64 { number("spacing", default: 0) }
        func currentThread() -> Int32 { number("self", default: 0) }
        func cpuTime(of tid: Int32) -> Int64 { number("cpu", "\(tid)", default: -1) }
        func scheduleSequence(of tid: Int32) -> Int64 { number("sequence", "\(tid)", default: -1) }
        func attachedAt(_ tid: Int32) -> UInt64 { number("attached", "\(tid)", default: 0) }

        func openSwitchRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) {
            let words = replay.answer("ring-open", "\(tid)")
            return (Self.handle(words?.first), words?.dropFirst().first.flatMap { Int32($0) } ?? -EINVAL)
        }

        func closeSwitchRing(_ ring: OpaquePointer) { _ = replay.answer("ring-close", WallTraceFormat.word(ring)) }

        func readSwitches(_ ring: OpaquePointer, into records: inout [ss_switch]) {
            guard let word = replay.answer("ring-read", WallTraceFormat.word(ring))?.first else { return }
            records += WallTraceFormat.items(word).compactMap(WallTraceFormat.switchRecord)
        }

        func newestSwitch(in ring: OpaquePointer) -> ss_switch? {
            replay.answer("ring-newest", WallTraceFormat.word(ring))?.first.flatMap(WallTraceFormat.switchRecord)
        }

        func hasUnreadSwitches(_ ring: OpaquePointer) -> Bool { flag("ring-unread", ring) }
        func switchRingFilling(_ ring: OpaquePointer) -> Bool { flag("ring-filling", ring) }

        func blockedPosition(of tid: Int32, heldFile: UnsafeMutablePointer<Int32>?) -> (found: Int32, position: ss_blocked_position) {
            var position = ss_blocked_position()
            guard let words = replay.answer("position", "\(tid)"), words.count == 4 else { return (-1, position) }
            position.stack_pointer = UInt(words[1]) ?? 0
            position.program_counter = UInt(words[2]) ?? 0
            if let heldFile, let held = Int32(words[3]) { heldFile.pointee = held }
            return (Int32(words[0]) ?? -1, position)
        }

        func unwindBlocked(at position: ss_blocked_position) -> UnwoundStack {
            guard let words = replay.answer("unwind"), words.count == 4 else {
                return UnwoundStack(frames: [], outcome: 0, framePointerSteps: 0, inProfilerCode: false)
            }
            return UnwoundStack(frames: replay.stack(words[3]), outcome: Int32(words[0]) ?? 0,
                                framePointerSteps: Int32(words[1]) ?? 0, inProfilerCode: words[2] == "1")
        }

        func closeHeldFile(_ file: Int32) { _ = replay.answer("held-close", "\(file)") }

        func blocksSignal(_ tid: Int32) -> Bool { replay.answer("blocks-signal", "\(tid)")?.first != "0" }

        func openPreemptionRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) {
            let words = replay.answer("copy-open", "\(tid)")
            return (Self.handle(words?.first), words?.dropFirst().first.flatMap { Int32($0) } ?? -EINVAL)
        }

        func closePreemptionRing(_ ring: OpaquePointer) { _ = replay.answer("copy-close", WallTraceFormat.word(ring)) }

        func walkPreemption(_ ring: OpaquePointer, since: UInt64, at time: UInt64) -> Sample? {
            replay.answer("copy-walk", WallTraceFormat.word(ring), "\(since)", "\(time)")?.first.flatMap(replay.sample)
        }

        func dropPreemptions(_ ring: OpaquePointer, upTo time: UInt64) {
            _ = replay.answer("copy-drop", WallTraceFormat.word(ring), "\(time)")
        }
    }
}
