import CEngineHeader

/// Wall mode: what a thread's context switches (`ss_switch` records, oldest first) say of where
/// it was at a tick, and how its ticks lie against a moment. Pure functions of the records.
enum SwitchTimeline {
    /// How many of `due` ticks `spacing` apart, the last at `now`, come at or before `end`.
    static func ticks(_ due: Int, at now: UInt64, spacing: UInt64, upTo end: UInt64) -> Int {
        guard end < now else { return due }
        return max(0, due - Int((now - end + spacing - 1) / spacing))
    }

    /// How long the sleep that began at `start` lasted, if `records` show its end.
    static func length(ofSleepFrom start: UInt64, in records: [ss_switch]) -> UInt64? {
        records.first { $0.kind == SS_SWITCH_IN && $0.time_ns > start }.map { $0.time_ns - start }
    }

    /// Where a thread was at `time`, from where it was before `records` (its switches since
    /// the last tick, oldest first, up to `end` and maybe after it), and how long it was on a
    /// core from then until `end`.
    static func place(at time: UInt64, from before: WallThread.Place, records: [ss_switch], until end: UInt64)
        -> (WallThread.Place, Int64) {
        var place = before
        var index = 0
        while index < records.count, records[index].time_ns <= time {
            place = WallThread.Place(records[index])
            index += 1
        }
        let then = place
        var running: Int64 = 0
        var from = time
        for record in records[index...] where record.time_ns <= end {
            if place == .onCore { running += Int64(record.time_ns &- from) }
            from = record.time_ns
            place = WallThread.Place(record)
        }
        if place == .onCore, end > from { running += Int64(end - from) }
        return (then, running)
    }
}
