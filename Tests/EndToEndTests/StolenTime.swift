import Foundation

/// The share of the machine's CPU time its host stole (`steal` in /proc/stat) over a stretch of
/// time. A thread's CPU clock leaves the stolen time out; the perf engine's task-clock counters
/// count it (they run while the thread is on a core, stolen or not), so on such a machine they
/// sample a thread once per period of its CPU time plus what was stolen from it.
struct StolenTime {
    private let start: (steal: UInt64, total: UInt64)

    /// Starts measuring now.
    init() { start = Self.read() }

    /// The stolen share since `init`, 0 to 1 (0 where /proc/stat cannot be read).
    var share: Double {
        let end = Self.read()
        guard end.total > start.total else { return 0 }
        return Double(end.steal - start.steal) / Double(end.total - start.total)
    }

    /// The `cpu` line's steal and total ticks.
    private static func read() -> (steal: UInt64, total: UInt64) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") }) else { return (0, 0) }
        // user nice system idle iowait irq softirq steal (guest time is inside user already).
        let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { UInt64($0) }
        guard fields.count == 8 else { return (0, 0) }
        return (fields[7], fields.reduce(0, +))
    }
}
