import Foundation

/// Whether wall mode's copies of the stack at each preemption are allowed here (PreemptionSnapshots):
/// the kernel lets this user profile it (CAP_PERFMON or CAP_SYS_ADMIN in the effective set, or
/// `perf_event_paranoid` at most 1), and the process may lock memory (CAP_IPC_LOCK).
enum KernelProfiling {
    static var allowed: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let capabilities = UInt64(line.split(separator: "\t").last ?? "", radix: 16) else { return false }
        let perfmon: UInt64 = 1 << 38, sysAdmin: UInt64 = 1 << 21, ipcLock: UInt64 = 1 << 14
        guard capabilities & ipcLock != 0 else { return false }
        if capabilities & (perfmon | sysAdmin) != 0 { return true }
        let paranoid = (try? String(contentsOfFile: "/proc/sys/kernel/perf_event_paranoid", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return paranoid.map { $0 <= 1 } ?? false
    }

    /// The summary's `preempted:` counts: waits for a core counted at a copy of the stack where
    /// the thread was preempted, and at its nearest sample (0 and 0 without the line).
    static func preemptions(inSummary stderr: String) -> (atCopy: Int, atNearestSample: Int) {
        guard let line = stderr.split(separator: "\n").first(where: { $0.hasPrefix("stacksampler: preempted: ") }) else { return (0, 0) }
        let words = line.split(separator: " ")
        let atCopy = Int(words[2]) ?? 0
        let nearest = words.firstIndex(of: "at").flatMap { at in words.indices.contains(at - 1) ? Int(words[at - 1]) : nil }
        return (atCopy, nearest ?? 0)
    }
}
