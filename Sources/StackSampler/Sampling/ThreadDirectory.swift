/// The threads of this process as the kernel lists them under /proc/self/task.
enum ThreadDirectory {
    /// Kernel thread ids of all live threads.
    static func threadIDs() -> [Int32] {
        FileIO.directoryEntries("/proc/self/task").compactMap { Int32($0) }
    }

    /// Whether thread `tid` blocks signal `signo` (from `SigBlk` in its status), or nil if it has exited.
    static func blocks(_ tid: Int32, signal signo: Int32) -> Bool? {
        guard let status = FileIO.readProcText("/proc/self/task/\(tid)/status", limit: 8192),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).drop(while: { $0 == " " || $0 == "\t" }), radix: 16)
        else { return nil }
        return signo >= 1 && signo <= 64 && mask & (UInt64(1) << UInt64(signo - 1)) != 0
    }

    /// The thread's name (`comm`), or nil once it has exited.
    static func name(of tid: Int32) -> String? {
        guard let text = FileIO.readProcText("/proc/self/task/\(tid)/comm", limit: 64) else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Where the thread is blocked: its `/proc` syscall line (call number, arguments, stack pointer
    /// and PC), or nil while it runs or once it has exited.
    /// The kernel sometimes answers `running` for a thread caught changing state; one more
    /// read settles most of those.
    static func blockedPosition(of tid: Int32) -> String? {
        for _ in 0..<2 {
            guard let text = FileIO.readProcText("/proc/self/task/\(tid)/syscall", limit: 256), !text.isEmpty else { return nil }
            if !text.hasPrefix("running") { return text }
        }
        return nil
    }
}
