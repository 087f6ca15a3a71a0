import CEngineHeader

/// A wall trace: everything a `WallScheduler` was told and every answer its probes gave, in
/// order, one line each, so that the session's accounting can be run again without the kernel
/// (`WallTraceRecorder` writes it; the unit tests replay it). Lines are words separated by one
/// space, the first naming the line:
/// - `wall-trace 2 PERIOD SLOTS CORES COUNTER-PERIOD SEED SWITCH-BOUND COPY-BOUND`: first (`header`);
/// - what the scheduler is told: `wake NOW DUE LATE TIDS`, `route SAMPLE`, `look TICK`,
///   `watch TIDS`, `ended TID:CPU:TIME,…`, `ending TID`, `forget TID`, `settle`, `finish`,
///   `stop TID TIME`;
/// - what its probes answered: `now T`, `spacing NS`, `self TID`, `cpu TID NS`, `sequence TID N`,
///   `attached TID T`, `ring-open TID HANDLE ERROR`, `ring-close HANDLE`, `ring-read HANDLE SWITCHES`,
///   `ring-newest HANDLE SWITCH`, `ring-unread HANDLE 0|1`, `ring-filling HANDLE 0|1`,
///   `position TID FOUND SP PC HELD`, `unwind OUTCOME FP-STEPS IN-PROFILER STACK`, `held-close FD`,
///   `blocks-signal TID 0|1`,
///   `copy-open TID HANDLE ERROR`, `copy-close HANDLE`, `copy-walk HANDLE SINCE TIME SAMPLE`,
///   `copy-drop HANDLE TIME`;
/// - `stack ID FRAMES`: a stack (hex addresses, leaf first, comma-separated), before its first use;
/// - at the end: `counted N`, the ticks the session counted with a stack, `lost REASON N` for each
///   reason it counted ticks lost (a `TickLoss` case), and
///   `name ADDRESS NAME…` for each address of the trace's stacks.
///
/// A list is comma-separated, `-` when empty. A SAMPLE is `TID:TIME:CPU:PERIODS:CUT:FP:STACK`
/// (CPU `-` for none, CUT the `Profile.StackCut` raw value or 0, FP 1 if the walk crossed frame
/// pointers, STACK a stack's id); a SWITCH is `KIND:TIME`. A HANDLE is a number, 0 for none.
enum WallTraceFormat {
    /// The first word of a trace.
    static let magic = "wall-trace"
    /// The version the recorder writes and the replay reads.
    static let version = 2

    /// The first line of the trace of a schedule ticking every `periodNanoseconds` for an engine
    /// buffer of `bufferSlots` samples, whose probes gave `fixed`. (The walks' depth is not in
    /// it: the trace holds the frames they found.)
    static func header(periodNanoseconds: UInt64, bufferSlots: Int, fixed: WallFixedFigures) -> String {
        [magic, "\(version)", "\(periodNanoseconds)", "\(bufferSlots)", "\(fixed.cores)", "\(fixed.counterPeriod)", "\(fixed.seed)",
         "\(fixed.switchRingBound)", "\(fixed.preemptionRingBound)"].joined(separator: " ")
    }

    /// A comma-separated list, `-` when empty.
    static func list<S: Sequence>(_ items: S, _ item: (S.Element) -> String) -> String {
        let words = items.map(item)
        return words.isEmpty ? "-" : words.joined(separator: ",")
    }

    /// The items of a list word.
    static func items(_ word: Substring) -> [Substring] {
        word == "-" ? [] : word.split(separator: ",")
    }

    /// A switch record as a word.
    static func word(_ record: ss_switch) -> String { "\(record.kind.rawValue):\(record.time_ns)" }

    /// A switch record from its word.
    static func switchRecord(_ word: Substring) -> ss_switch? {
        let parts = word.split(separator: ":")
        guard parts.count == 2, let kind = UInt32(parts[0]), let time = UInt64(parts[1]) else { return nil }
        return ss_switch(time_ns: time, kind: ss_switch_kind(rawValue: kind))
    }

    /// A sample as a word, its stack named by `stack`.
    static func word(_ sample: Sample, stack: Int) -> String {
        let cpu = sample.cpuNanoseconds.map(String.init) ?? "-"
        return "\(sample.tid):\(sample.timeNanoseconds):\(cpu):\(sample.periods):\(sample.cut?.rawValue ?? 0):"
            + "\(sample.throughFramePointers ? 1 : 0):\(stack)"
    }

    /// A sample from its word, its frames those of the stack it names (`stacks`).
    static func sample(_ word: Substring, stacks: [Int: [UInt]]) -> Sample? {
        let parts = word.split(separator: ":")
        guard parts.count == 7, let tid = Int32(parts[0]), let time = UInt64(parts[1]), let periods = Int(parts[3]),
              let cut = UInt8(parts[4]), let stack = Int(parts[6]), let frames = stacks[stack] else { return nil }
        return Sample(tid: tid, timeNanoseconds: time, frames: frames, cut: Profile.StackCut(rawValue: cut),
                      periods: periods, cpuNanoseconds: Int64(parts[2]), throughFramePointers: parts[5] == "1")
    }

    /// A stack's frames as a word.
    static func word(frames: [UInt]) -> String { list(frames) { String($0, radix: 16) } }

    /// A stack's frames from its word.
    static func frames(_ word: Substring) -> [UInt]? {
        let frames = items(word).compactMap { UInt($0, radix: 16) }
        return frames.count == items(word).count ? frames : nil
    }

    /// A handle as a number (0 for none).
    static func word(_ handle: OpaquePointer?) -> String { String(UInt(bitPattern: handle)) }
}
