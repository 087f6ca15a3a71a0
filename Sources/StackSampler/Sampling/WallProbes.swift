import CEngineHeader
import Glibc

/// Everything wall mode asks of the kernel and of the process around it: clocks, CPU times, the
/// context-switch rings, where a blocked thread is and its stack, the kernel's copies at
/// preemptions. `WallScheduler` and its helpers ask nothing else, so that they run the same on
/// a recorded trace (`WallTraceReplay`) as on the kernel (`KernelWallProbes`), and a change to
/// the accounting is checked without a kernel and as any user. Handles (rings) are the kernel
/// side's: the scheduler keeps and hands them back, never reads through them.
protocol WallProbes: AnyObject {
    /// The figures that stay fixed for the session, read once as it starts.
    var fixed: WallFixedFigures { get }
    /// CLOCK_MONOTONIC, in ns (`ss_now_ns`).
    func now() -> UInt64
    /// CPU time between two samples of a running thread with the session's engine (`ss_engine_sample_spacing_ns`).
    func sampleSpacing() -> Int64
    /// The calling thread's tid.
    func currentThread() -> Int32
    /// The thread's CPU time in ns, negative once it has exited (`ss_thread_cpu_time_ns`).
    func cpuTime(of tid: Int32) -> Int64
    /// How many times the thread has been given a core (`ss_thread_schedule_sequence`), negative if not known.
    func scheduleSequence(of tid: Int32) -> Int64
    /// When the thread's attach began (`ss_thread_attached_at`; 0 if not known).
    func attachedAt(_ tid: Int32) -> UInt64
    /// Opens the thread's context-switch ring; nil with the kernel's (or a filter's) error.
    func openSwitchRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32)
    /// Gives a ring back.
    func closeSwitchRing(_ ring: OpaquePointer)
    /// Appends the ring's records not read yet to `records`, oldest first.
    func readSwitches(_ ring: OpaquePointer, into records: inout [ss_switch])
    /// The newest record in the ring not read yet, if any.
    func newestSwitch(in ring: OpaquePointer) -> ss_switch?
    /// Whether the ring holds records not read yet.
    func hasUnreadSwitches(_ ring: OpaquePointer) -> Bool
    /// Whether the ring is filling up (read it before the kernel loses records).
    func switchRingFilling(_ ring: OpaquePointer) -> Bool
    /// One read of where the thread is blocked (`ss_thread_blocked_position`: 1 blocked, 0
    /// running, -1 exited), through its held file if `heldFile` is given (opened there if free).
    func blockedPosition(of tid: Int32, heldFile: UnsafeMutablePointer<Int32>?) -> (found: Int32, position: ss_blocked_position)
    /// Walks the stack of a thread blocked at `position`, leaf first, up to the session's depth
    /// (`ss_unwind_stack` on the process's memory), and says whether any frame is in the
    /// profiler's own code.
    func unwindBlocked(at position: ss_blocked_position) -> UnwoundStack
    /// Closes a thread's held file.
    func closeHeldFile(_ file: Int32)
    /// Whether the thread blocks the engine's signal, as its mask (`/proc`) and the engine's
    /// interposers say; true when that cannot be read.
    func blocksSignal(_ tid: Int32) -> Bool
    /// Opens the ring of the kernel's stack copies at the thread's preemptions; nil with the error.
    func openPreemptionRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32)
    /// Gives a copy ring back.
    func closePreemptionRing(_ ring: OpaquePointer)
    /// The copy taken as the thread left its core at `time` (on the core since `since`), walked
    /// whole (up to the session's depth), if there is one.
    func walkPreemption(_ ring: OpaquePointer, since: UInt64, at time: UInt64) -> Sample?
    /// Drops the copies taken up to `time`.
    func dropPreemptions(_ ring: OpaquePointer, upTo time: UInt64)
}

extension WallProbes {
    /// The thread's CPU time and a moment it was read at (the moment before the read: it is at
    /// most the read's length ahead of the CPU time then); read again, up to twice, if the read
    /// took longer than 20 µs (the sampler thread lost its core meanwhile).
    func promptCPUTime(of tid: Int32) -> (cpu: Int64, at: UInt64) {
        let slack: UInt64 = 20_000
        var attempt = 0
        while true {
            let before = now()
            let cpu = cpuTime(of: tid)
            attempt += 1
            if cpu < 0 || now() &- before <= slack || attempt == 3 { return (cpu, before) }
        }
    }
}

/// What stays fixed for a wall session: read once from the machine and the engine.
struct WallFixedFigures: Equatable {
    /// Online cores.
    var cores: Int
    /// The counters' period for the session's tick (`ss_wall_counter_period`).
    var counterPeriod: UInt64
    /// The seed of the subsample of threads without a ring (`LookSubsample`).
    var seed: UInt64
    /// Context-switch rings open at most (`ss_switch_ring_bound`).
    var switchRingBound: Int
    /// Copy rings open at most (`ss_preempt_ring_bound`).
    var preemptionRingBound: Int
}

/// A blocked thread's stack as walked (`WallProbes.unwindBlocked`).
struct UnwoundStack {
    /// Leaf first; empty if nothing could be read.
    var frames: [UInt]
    /// How the walk ended (`SS_WALK_*`).
    var outcome: Int32
    /// Steps taken by frame pointers.
    var framePointerSteps: Int32
    /// Whether a frame lies in the profiler's own modules (a thread asleep there is the profiler's).
    var inProfilerCode: Bool
}

/// The probes of a live session: the kernel, through the engine.
final class KernelWallProbes: WallProbes {
    let fixed: WallFixedFigures
    /// The profiler's own modules' code (`ProfilerModules.codeRanges`).
    private let profilerCode = ProfilerModules.codeRanges()
    private let pages = UnsafeMutablePointer<ss_page_cache>.allocate(capacity: 1)
    /// Frames a walk keeps at most (the session's depth).
    private let depth: Int
    /// Room for one walked sample (header and `depth` frames), reused by every walk.
    private let buffer: UnsafeMutableRawPointer
    /// Reused by every read of a ring.
    private var chunk = [ss_switch](repeating: ss_switch(), count: 256)

    /// Probes for a session ticking every `periodNanoseconds`, walking stacks up to `maxDepth` frames.
    init(periodNanoseconds: UInt64, maxDepth: Int) {
        fixed = WallFixedFigures(cores: max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))),
                                 counterPeriod: ss_wall_counter_period(periodNanoseconds),
                                 seed: ss_now_ns() ^ UInt64(getpid()),
                                 switchRingBound: Int(ss_switch_ring_bound()),
                                 preemptionRingBound: Int(ss_preempt_ring_bound()))
        depth = maxDepth
        buffer = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<ss_sample>.stride + maxDepth * MemoryLayout<UInt>.size,
                                                  alignment: MemoryLayout<ss_sample>.alignment)
    }

    deinit {
        buffer.deallocate()
        pages.deallocate()
    }

    func now() -> UInt64 { ss_now_ns() }
    func sampleSpacing() -> Int64 { Int64(ss_engine_sample_spacing_ns()) }
    func currentThread() -> Int32 { ss_current_tid() }
    func cpuTime(of tid: Int32) -> Int64 { ss_thread_cpu_time_ns(tid) }
    func scheduleSequence(of tid: Int32) -> Int64 { ss_thread_schedule_sequence(tid) }
    func attachedAt(_ tid: Int32) -> UInt64 { ss_thread_attached_at(tid) }

    func openSwitchRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) {
        var error: Int32 = 0
        let ring = ss_switch_ring_open(tid, &error)
        return (ring, error)
    }

    func closeSwitchRing(_ ring: OpaquePointer) { ss_switch_ring_close(ring) }

    func readSwitches(_ ring: OpaquePointer, into records: inout [ss_switch]) {
        while true {
            let count = chunk.withUnsafeMutableBufferPointer { ss_switch_ring_read(ring, $0.baseAddress, Int32($0.count)) }
            records += chunk[0..<Int(count)]
            if Int(count) < chunk.count { break }
        }
    }

    func newestSwitch(in ring: OpaquePointer) -> ss_switch? {
        var newest = ss_switch()
        return ss_switch_ring_newest(ring, &newest) != 0 ? newest : nil
    }

    func hasUnreadSwitches(_ ring: OpaquePointer) -> Bool { ss_switch_ring_unread(ring) != 0 }
    func switchRingFilling(_ ring: OpaquePointer) -> Bool { ss_switch_ring_filling(ring) != 0 }

    func blockedPosition(of tid: Int32, heldFile: UnsafeMutablePointer<Int32>?) -> (found: Int32, position: ss_blocked_position) {
        var position = ss_blocked_position()
        let found = if let heldFile { ss_thread_blocked_position_held(tid, heldFile, &position) }
            else { ss_thread_blocked_position(tid, &position) }
        return (found, position)
    }

    func unwindBlocked(at position: ss_blocked_position) -> UnwoundStack {
        let frames = UnsafeMutablePointer(mutating: ss_sample_frames(buffer))!
        pages.initialize(to: ss_page_cache())
        var outcome: Int32 = 0
        var framePointerSteps: Int32 = 0
        let count = ss_unwind_stack(position.program_counter, position.stack_pointer, 0, 0, ss_read_memory_paged, pages,
                                    frames, Int32(depth), &outcome, &framePointerSteps)
        let walked = Array(UnsafeBufferPointer(start: frames, count: Int(max(0, count))))
        let inProfilerCode = !profilerCode.isEmpty && walked.contains { frame in profilerCode.contains { $0.contains(frame) } }
        return UnwoundStack(frames: walked, outcome: outcome, framePointerSteps: framePointerSteps, inProfilerCode: inProfilerCode)
    }

    func closeHeldFile(_ file: Int32) { ss_held_file_close(file) }

    func blocksSignal(_ tid: Int32) -> Bool {
        ss_thread_signal_blocked(tid) != 0 || ThreadDirectory.blocks(tid, signal: ss_engine_signal()) != false
    }

    func openPreemptionRing(for tid: Int32) -> (ring: OpaquePointer?, error: Int32) {
        var error: Int32 = 0
        let ring = ss_preempt_ring_open(tid, &error)
        return (ring, error)
    }

    func closePreemptionRing(_ ring: OpaquePointer) { ss_preempt_ring_close(ring) }

    func walkPreemption(_ ring: OpaquePointer, since: UInt64, at time: UInt64) -> Sample? {
        let header = buffer.assumingMemoryBound(to: ss_sample.self)
        guard ss_preempt_ring_walk(ring, since, time, header, Int32(depth)) == 1 else { return nil }
        return Sample(UnsafePointer(header))
    }

    func dropPreemptions(_ ring: OpaquePointer, upTo time: UInt64) { ss_preempt_ring_drop(ring, time) }
}
