import CEngineHeader
import Glibc

/// Records a wall session as a trace (`WallTraceFormat`) for the unit tests to replay: set
/// `STACKSAMPLER_WALL_TRACE` to a path, and a wall session started in that process writes there,
/// as it finishes, what its scheduler was told and what its probes answered. A tool for the
/// project's developers (`Scripts/record-wall-traces.sh`): the trace is kept in memory until the
/// session ends (a few MB for seconds of a few threads), so a process killed first leaves none.
final class WallTraceRecorder {
    /// The environment variable that names the trace's path.
    static let variable = "STACKSAMPLER_WALL_TRACE"

    private let path: String
    private var text = ""
    private var stackIDs: [[UInt]: Int] = [:]

    /// A recorder that writes to `path` as the session finishes.
    init(path: String) { self.path = path }

    /// The path the environment names, if any (never for a program that runs with more
    /// privilege than its caller: `ss_secure_execution`).
    static var requestedPath: String? {
        guard ss_secure_execution() == 0, let value = getenv(variable), value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Adds a line.
    func line(_ words: String) {
        text += words
        text += "\n"
    }

    /// The id of `frames`, written as a `stack` line the first time.
    func stack(_ frames: [UInt]) -> Int {
        if let id = stackIDs[frames] { return id }
        let id = stackIDs.count
        stackIDs[frames] = id
        line("stack \(id) \(WallTraceFormat.word(frames: frames))")
        return id
    }

    /// A sample as a word, its stack written first if new.
    func word(_ sample: Sample) -> String { WallTraceFormat.word(sample, stack: stack(sample.frames)) }

    /// Ends the trace with the session's counts (`counted` ticks with a stack, `lost` by reason)
    /// and the names of its stacks' addresses, and writes it; a failure is said on standard error
    /// (the profile is not touched).
    func finish(counted: Int, lost: [TickLoss: Int]) {
        line("counted \(counted)")
        for (reason, count) in lost.sorted(by: { "\($0.key)" < "\($1.key)" }) { line("lost \(reason) \(count)") }
        let symbolizer = Symbolizer()
        for address in Set(stackIDs.keys.joined()).sorted() {
            line("name \(String(address, radix: 16)) \(symbolizer.symbolize(address).name)")
        }
        do {
            try FileIO.write(Array(text.utf8), to: path)
        } catch {
            StandardError.report("the wall trace was not written: \(error)")
        }
        text = ""
    }
}

/// The kernel's probes, each answer written to a trace as it is given.
final class RecordingWallProbes: WallProbes {
    private let base: any WallProbes
    private let trace: WallTraceRecorder

    /// Probes that answer as `base` does and write each answer to `trace`.
    init(_ base: any WallProbes, trace: WallTraceRecorder) {
        self.base = base
        self.trace = trace
    }

    var fixed: WallFixedFigures { base.fixed }

    func now() -> UInt64 { noted("now", base.now()) }
    func sampleSpacing() -> Int64 { noted("spacing", base.sampleSpacing()) }
    func currentThread() -> Int32 { noted("self", base.currentThread()) }
    func cpuTime(of tid: Int32) -> Int64 { noted("cpu \(tid)", base.cpuTime(of: tid)) }
    func scheduleSequence(of tid: Int32) -> Int64 { noted("sequence \(tid)", base.scheduleSequence(of: tid)) }
    func attachedAt(_ tid: Int32) -> UInt64 { noted("attached \(tid)", base.attachedAt(tid)) }

    func openSwitchRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) { opening("ring-open", tid, base.openSwitchRing(for: tid)) }

    func closeSwitchRing(_ ring: OpaquePointer) {
        trace.line("ring-close \(WallTraceFormat.word(ring))")
        base.closeSwitchRing(ring)
    }

    func readSwitches(_ ring: OpaquePointer, into records: inout [ss_switch]) {
        var read: [ss_switch] = []
        base.readSwitches(ring, into: &read)
        trace.line("ring-read \(WallTraceFormat.word(ring)) \(WallTraceFormat.list(read, WallTraceFormat.word))")
        records += read
    }

    func newestSwitch(in ring: OpaquePointer) -> ss_switch? {
        let newest = base.newestSwitch(in: ring)
        trace.line("ring-newest \(WallTraceFormat.word(ring)) \(newest.map(WallTraceFormat.word) ?? "-")")
        return newest
    }

    func hasUnreadSwitches(_ ring: OpaquePointer) -> Bool {
        noted("ring-unread \(WallTraceFormat.word(ring))", base.hasUnreadSwitches(ring))
    }

    func switchRingFilling(_ ring: OpaquePointer) -> Bool {
        noted("ring-filling \(WallTraceFormat.word(ring))", base.switchRingFilling(ring))
    }

    func blockedPosition(of tid: Int32, heldFile: UnsafeMutablePointer<Int32>?) -> (found: Int32, position: ss_blocked_position) {
        let read = base.blockedPosition(of: tid, heldFile: heldFile)
        let held = heldFile.map { String($0.pointee) } ?? "-"
        trace.line("position \(tid) \(read.found) \(read.position.stack_pointer) \(read.position.program_counter) \(held)")
        return read
    }

    func unwindBlocked(at position: ss_blocked_position) -> UnwoundStack {
        let stack = base.unwindBlocked(at: position)
        let id = trace.stack(stack.frames)
        trace.line("unwind \(stack.outcome) \(stack.framePointerSteps) \(stack.inProfilerCode ? 1 : 0) \(id)")
        return stack
    }

    func closeHeldFile(_ file: Int32) {
        trace.line("held-close \(file)")
        base.closeHeldFile(file)
    }

    func blocksSignal(_ tid: Int32) -> Bool { noted("blocks-signal \(tid)", base.blocksSignal(tid)) }

    func openPreemptionRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) {
        opening("copy-open", tid, base.openPreemptionRing(for: tid))
    }

    func closePreemptionRing(_ ring: OpaquePointer) {
        trace.line("copy-close \(WallTraceFormat.word(ring))")
        base.closePreemptionRing(ring)
    }

    func walkPreemption(_ ring: OpaquePointer, since: UInt64, at time: UInt64) -> Sample? {
        let sample = base.walkPreemption(ring, since: since, at: time)
        trace.line("copy-walk \(WallTraceFormat.word(ring)) \(since) \(time) \(sample.map(trace.word) ?? "-")")
        return sample
    }

    func dropPreemptions(_ ring: OpaquePointer, upTo time: UInt64) {
        trace.line("copy-drop \(WallTraceFormat.word(ring)) \(time)")
        base.dropPreemptions(ring, upTo: time)
    }

    /// Writes the opening of a ring for `tid` (its handle and error), and gives it back.
    private func opening(_ kind: String, _ tid: Int32, _ opened: (ring: OpaquePointer?, error: Int32)) -> (ring: OpaquePointer?, error: Int32) {
        trace.line("\(kind) \(tid) \(WallTraceFormat.word(opened.ring)) \(opened.error)")
        return opened
    }

    /// Writes `words` and the answer, and gives the answer back.
    private func noted<Answer>(_ words: String, _ answer: Answer) -> Answer {
        let value = if let flag = answer as? Bool { flag ? "1" : "0" } else { "\(answer)" }
        trace.line("\(words) \(value)")
        return answer
    }
}

/// A wall schedule whose every input is written to a trace before it is handed on.
final class RecordingWallSchedule: SamplerSchedule {
    private let base: WallScheduler
    private let trace: WallTraceRecorder

    /// A wall schedule recorded into `trace` from its first line (`header`) on.
    init(_ base: WallScheduler, header: String, trace: WallTraceRecorder) {
        self.base = base
        self.trace = trace
        trace.line(header)
    }

    var intervalNanoseconds: UInt64 { base.intervalNanoseconds }
    var ticksPerWake: Int { base.ticksPerWake }
    var ticksPerLook: Int { base.ticksPerLook }
    var missedTicks: Int { base.missedTicks }
    var lostTicks: [TickLoss: Int] { base.lostTicks }
    var preemptionCounts: (atCopy: Int, atNearestSample: Int) { base.preemptionCounts }
    var subsampledTicks: Int { base.subsampledTicks }
    var subsampleLooksPerSecond: Int { base.subsampleLooksPerSecond }
    var ringsGivenBackForSwitches: Int { base.ringsGivenBackForSwitches }
    var watchesNewThreads: Bool { base.watchesNewThreads }

    func arrived(_ sample: Sample) -> Int { base.arrived(sample) }

    func route(_ sample: Sample, into routing: inout SampleRouting) {
        trace.line("route \(trace.word(sample))")
        base.route(sample, into: &routing)
    }

    func lookAtSleeps(at tick: UInt64) {
        trace.line("look \(tick)")
        base.lookAtSleeps(at: tick)
    }

    func wake(at now: UInt64, due: Int, late: Int, threads: ArraySlice<Int32>, routing: inout SampleRouting) {
        trace.line("wake \(now) \(due) \(late) \(WallTraceFormat.list(threads) { String($0) })")
        base.wake(at: now, due: due, late: late, threads: threads, routing: &routing)
    }

    func threadEnded(_ tid: Int32) {
        trace.line("forget \(tid)")
        base.threadEnded(tid)
    }

    func threadEnding(_ tid: Int32, routing: inout SampleRouting) {
        trace.line("ending \(tid)")
        base.threadEnding(tid, routing: &routing)
    }

    func settle(routing: inout SampleRouting) {
        trace.line("settle")
        base.settle(routing: &routing)
    }

    func finishing(routing: inout SampleRouting) {
        trace.line("finish")
        base.finishing(routing: &routing)
        trace.finish(counted: routing.aggregator.counts.values.reduce(0, +), lost: base.lostTicks)
    }

    func stopping(_ tid: Int32, from time: UInt64) {
        trace.line("stop \(tid) \(time)")
        base.stopping(tid, from: time)
    }

    func watch(_ threads: ArraySlice<Int32>) {
        trace.line("watch \(WallTraceFormat.list(threads) { String($0) })")
        base.watch(threads)
    }

    func threadsEnded(_ notes: [ss_ended_thread]) {
        trace.line("ended \(WallTraceFormat.list(notes) { "\($0.tid):\($0.cpu_ns):\($0.time_ns)" })")
        base.threadsEnded(notes)
    }
}
