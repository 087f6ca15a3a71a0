import CEngineHeader
import Glibc

/// The threads of this process as the kernel lists them under /proc/self/task.
enum ThreadDirectory {
    /// Kernel thread ids of all live threads.
    static func threadIDs() -> [Int32] {
        FileIO.directoryEntries("/proc/self/task").compactMap { Int32($0) }
    }

    /// Whether thread `tid` blocks signal `signo` (from `SigBlk` in its status, or its own
    /// mask for the calling thread), or nil if it has exited.
    static func blocks(_ tid: Int32, signal signo: Int32) -> Bool? {
        if tid == ss_current_tid() {
            var mask = sigset_t()
            guard pthread_sigmask(SIG_BLOCK, nil, &mask) == 0 else { return nil }
            return sigismember(&mask, signo) == 1
        }
        let blocked = ss_thread_blocks_signal(tid, signo)
        return blocked < 0 ? nil : blocked == 1
    }

    /// How many times the thread has given up its core of its own accord (to sleep or wait:
    /// `voluntary_ctxt_switches` in its status), or nil once it has exited. A thread preempted
    /// while it had work does not add to it.
    static func voluntarySwitches(of tid: Int32) -> Int? {
        guard let status = FileIO.readProcText("/proc/self/task/\(tid)/status", limit: 8192),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") })
        else { return nil }
        return Int(line.dropFirst("voluntary_ctxt_switches:".count).drop(while: { $0 == " " || $0 == "\t" }))
    }

    /// The thread's name (`comm`), or nil once it has exited.
    static func name(of tid: Int32) -> String? {
        guard let text = FileIO.readProcText("/proc/self/task/\(tid)/comm", limit: 64) else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
