import CEngineHeader
import Glibc

/// The threads of this process as the kernel lists them under /proc/self/task.
enum ThreadDirectory {
    /// Kernel thread ids of all live threads.
    static func threadIDs() -> [Int32] {
        FileIO.directoryEntries("/proc/self/task").compactMap { Int32($0) }
    }

    /// How many threads the process has, or -1 if unknown: the kernel gives /proc/self/task two
    /// links more than the threads (one `stat`, where `Threads:` in /proc/self/status costs the
    /// formatting of the whole file).
    static func threadCount() -> Int {
        var status = stat()
        guard stat("/proc/self/task", &status) == 0, status.st_nlink >= 2 else { return -1 }
        return Int(status.st_nlink) - 2
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
        // In an interposed wait, blocked by the profiler for the wait's length, not by the program.
        return blocked < 0 ? nil : blocked == 1 && ss_thread_in_masked_wait(tid) == 0
    }

    /// The thread's name (`comm`), or nil once it has exited.
    static func name(of tid: Int32) -> String? {
        guard let text = FileIO.readProcText("/proc/self/task/\(tid)/comm", limit: 64) else { return nil }
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
