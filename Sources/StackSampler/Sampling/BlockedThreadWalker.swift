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
        /// Blocked; its stack was walked into the sample buffer (`sample`).
        case walked(Position)
        /// Blocked but moving: the walk could not be checked; or blocked in the profiler's own
        /// code. Neither signal nor sample it now.
        case unsettled
        /// Exited.
        case gone
    }

    private let capacity: Int
    private let buffer: UnsafeMutableRawPointer
    private let pages = UnsafeMutablePointer<ss_page_cache>.allocate(capacity: 1)

    /// The last walked sample, valid until the next `look`.
    var sample: UnsafePointer<ss_sample> { UnsafePointer(buffer.assumingMemoryBound(to: ss_sample.self)) }

    /// The profiler's own modules' code (`ProfilerModules.codeRanges`): a program thread asleep
    /// in it (the stopping thread waiting for the sampler) is the profiler's, and is not walked.
    private let profilerCode = ProfilerModules.codeRanges()

    init(maxDepth: Int) {
        capacity = maxDepth
        buffer = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<ss_sample>.stride + maxDepth * MemoryLayout<UInt>.size,
                                                  alignment: MemoryLayout<ss_sample>.alignment)
    }

    deinit {
        buffer.deallocate()
        pages.deallocate()
    }

    /// Where `tid` is blocked now: nil while it runs, `.some(nil)` once it has exited. The kernel
    /// sometimes answers `running` for a thread caught changing state; one more read settles most
    /// (`readAgain`). A thread whose switches say it is asleep and that the kernel calls running
    /// was woken and waits for a core: a second read finds the same, and is not made. With
    /// `heldFile` (the thread's, `ss_thread_blocked_position_held`), read through its file held open.
    static func position(of tid: Int32, readAgain: Bool = true, heldFile: UnsafeMutablePointer<Int32>? = nil) -> Position?? {
        var raw = ss_blocked_position()
        let read = { (raw: inout ss_blocked_position) in
            if let heldFile { ss_thread_blocked_position_held(tid, heldFile, &raw) } else { ss_thread_blocked_position(tid, &raw) }
        }
        var found = read(&raw)
        if readAgain, found == 0 { found = read(&raw) }
        switch found {
        case 1: return .some(Position(raw: raw))
        case 0: return nil
        default: return .some(nil)
        }
    }

    /// Looks at `tid`, whose CPU time is `cpu` (read before this look): if it is blocked, walks its
    /// stack into `sample` (time `now`) and checks it stayed put meanwhile: with `stayedAsleep` (its
    /// context switches say whether it was switched in since), else by reading its CPU time again.
    /// Reads through the thread's held file (`heldFile`), if given.
    func look(at tid: Int32, cpu: Int64, now: UInt64, stayedAsleep: (() -> Bool)? = nil,
              heldFile: UnsafeMutablePointer<Int32>? = nil) -> Look {
        guard let found = Self.position(of: tid, readAgain: stayedAsleep == nil, heldFile: heldFile) else { return .running }
        guard let before = found else { return .gone }
        pages.initialize(to: ss_page_cache())
        let frames = UnsafeMutablePointer(mutating: ss_sample_frames(buffer))
        var outcome: Int32 = 0
        var framePointerSteps: Int32 = 0
        let count = ss_unwind_stack(before.programCounter, before.stackPointer, 0, 0, ss_read_memory_paged, pages,
                                    frames, Int32(capacity), &outcome, &framePointerSteps)
        let settled = stayedAsleep?() ?? (ss_thread_cpu_time_ns(tid) == cpu)
        guard settled, count > 0 else { return .unsettled }
        if !profilerCode.isEmpty, let frames, (0..<Int(count)).contains(where: { frame in profilerCode.contains { $0.contains(frames[frame]) } }) {
            return .unsettled
        }
        var flags = UInt16(SS_SAMPLE_WITHOUT_SIGNAL)
        if outcome == Int32(SS_WALK_TRUNCATED) { flags |= UInt16(SS_SAMPLE_TRUNCATED) }
        if outcome == Int32(SS_WALK_ENDED_EARLY) { flags |= UInt16(SS_SAMPLE_UNWIND_FAILED) }
        if framePointerSteps > 0 { flags |= UInt16(SS_SAMPLE_FRAME_POINTERS) }
        let header = buffer.assumingMemoryBound(to: ss_sample.self)
        header.pointee.time_ns = now
        header.pointee.cpu_ns = cpu
        header.pointee.tid = tid
        header.pointee.depth = UInt16(count)
        header.pointee.flags = flags
        header.pointee.periods = 1
        return .walked(before)
    }
}
