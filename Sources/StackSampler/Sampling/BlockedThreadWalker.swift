import CEngineHeader

/// Wall mode: the stack of a thread blocked in a system call, found without signalling it.
///
/// A handled signal makes `nanosleep`, `poll`, `epoll_wait`, `select`, `sigtimedwait` and others
/// return early with EINTR, whatever SA_RESTART says. So a blocked thread is never signalled:
/// the kernel shows the stack pointer and PC it blocked at (`/proc/self/task/TID/syscall`), its
/// stack is in this process's memory, and the engine's unwind tables walk it from there, reading
/// memory with `process_vm_readv` (which fails instead of faulting). Only those two registers
/// are known: a frame whose caller is found through its frame pointer (code built with frame
/// pointers) ends the walk unless a callee on the stack saved that pointer, and the sample is
/// then counted as ended early, with the frames found so far. The thread must not have run
/// between the read of its CPU time before the look and the end of the walk (or, for a thread
/// whose context switches are read, not been switched in since); otherwise the walk is not used.
/// Its CPU time the same after the walk is that proof: a thread's CPU clock moves with any time on
/// a core, and a thread that did not run has the registers and stack it blocked with (a second
/// read of where it blocks, once made too, proved nothing more and doubled the cost of a look).
final class BlockedThreadWalker {
    /// Where a thread is blocked, as the kernel shows it (`ss_thread_blocked_position`).
    struct Position {
        var raw: ss_blocked_position

        var stackPointer: UInt { raw.stack_pointer }
        var programCounter: UInt { raw.program_counter }
    }

    /// What a look at a thread found.
    enum Look {
        /// Running, or waiting for a core.
        case running
        /// Blocked; its stack, walked.
        case walked(Sample)
        /// Blocked but moving: the walk could not be checked; or blocked in the profiler's own
        /// code. Neither signal nor sample it now.
        case unsettled
        /// Exited.
        case gone
    }

    private let probes: any WallProbes

    /// A walker that reads and walks through `probes`.
    init(probes: any WallProbes) {
        self.probes = probes
    }

    /// Where `tid` is blocked now: nil while it runs, `.some(nil)` once it has exited. The kernel
    /// sometimes answers `running` for a thread caught changing state; one more read settles most
    /// (`readAgain`). A thread whose switches say it is asleep and that the kernel calls running
    /// was woken and waits for a core: a second read finds the same, and is not made. With
    /// `heldFile` (the thread's, `ss_thread_blocked_position_held`), read through its file held open.
    func position(of tid: Int32, readAgain: Bool = true, heldFile: UnsafeMutablePointer<Int32>? = nil) -> Position?? {
        var (found, raw) = probes.blockedPosition(of: tid, heldFile: heldFile)
        if readAgain, found == 0 { (found, raw) = probes.blockedPosition(of: tid, heldFile: heldFile) }
        switch found {
        case 1: return .some(Position(raw: raw))
        case 0: return nil
        default: return .some(nil)
        }
    }

    /// Looks at `tid`, whose CPU time is `cpu` (read before this look): if it is blocked, walks its
    /// stack (a sample at time `now`) and checks it stayed put meanwhile: with `stayedAsleep` (its
    /// context switches say whether it was switched in since), else by reading its CPU time again.
    /// Reads through the thread's held file (`heldFile`), if given.
    func look(at tid: Int32, cpu: Int64, now: UInt64, stayedAsleep: (() -> Bool)? = nil,
              heldFile: UnsafeMutablePointer<Int32>? = nil) -> Look {
        guard let found = position(of: tid, readAgain: stayedAsleep == nil, heldFile: heldFile) else { return .running }
        guard let before = found else { return .gone }
        let stack = probes.unwindBlocked(at: before.raw)
        let settled = stayedAsleep?() ?? (probes.cpuTime(of: tid) == cpu)
        guard settled, !stack.frames.isEmpty, !stack.inProfilerCode else { return .unsettled }
        let cut: Profile.StackCut? = if stack.outcome == Int32(SS_WALK_TRUNCATED) { .depth }
            else if stack.outcome == Int32(SS_WALK_ENDED_EARLY) { .noUnwindInfo } else { nil }
        return .walked(Sample(tid: tid, timeNanoseconds: now, frames: stack.frames, cut: cut, periods: 1, cpuNanoseconds: cpu,
                              throughFramePointers: stack.framePointerSteps > 0))
    }
}
