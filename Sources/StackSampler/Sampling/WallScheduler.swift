import CEngine
import Glibc

/// Wall mode: at every tick, one sample of every attached thread. A thread that used (next to)
/// no CPU since its stack was last known has not moved: its last stack is counted again. One
/// blocked in a system call is never signalled (the signal would end a sleep or poll early with
/// EINTR): its stack is walked from where the kernel shows it blocked (`BlockedThreadWalker`).
/// Only a running thread is signalled, unless its last signal has not produced its sample yet.
struct WallScheduler: SamplerSchedule {
    /// CPU time a thread can use without having moved: returning from the handler into the call
    /// it was in. More than that, and it is looked at again (signalled, or walked if blocked).
    private static let unmovedNanoseconds: Int64 = 5_000
    /// How long a mostly sleeping thread caught running is looked at again before it is signalled (see `wake`).
    private static let sleeperPatienceNanoseconds: UInt64 = 250_000
    /// A signal whose sample has not arrived by then is taken as lost (dropped, or a thread that blocks it).
    private static let outstandingSignalNanoseconds: UInt64 = 100_000_000

    /// The tick: the sampling period.
    let intervalNanoseconds: UInt64
    private(set) var missedTicks = 0
    private(set) var skippedTicks = 0
    /// Each thread's CPU time when its stack was last known (the end of its last sample's
    /// handler, or a tick that found it unchanged).
    private var cpuWhenStackKnown: [Int32: Int64] = [:]
    /// Each thread's CPU time, and the time, when a tick last looked at where it was.
    private var cpuAtLastTick: [Int32: (cpu: Int64, at: UInt64)] = [:]
    /// Each thread's voluntary context switches when last read (see `sleeps`).
    private var voluntarySwitches: [Int32: Int] = [:]
    /// Threads found preempted rather than sleeping, and until when that is taken as still true
    /// (their status is not read at every tick: it is the dearest of the sampler's reads).
    private var runnerUntil: [Int32: UInt64] = [:]
    /// How many ticks a thread found preempted counts as a runner without a new look at its status.
    private static let runnerTicks: UInt64 = 10
    /// Below this share of the time a runner is asked about again at once.
    private static let runnerShare = 0.25
    /// A signal sent and its sample not yet arrived (never two at once), and the ticks that
    /// passed meanwhile. The thread cannot move before its handler runs, so those ticks are
    /// owed to the stack that sample will carry.
    private struct OutstandingSignal {
        var sentAt: UInt64
        var owedTicks = 0
    }
    private var signalOutstanding: [Int32: OutstandingSignal] = [:]
    /// Walks the stacks of threads blocked in a system call, without a signal.
    private let blockedWalker: BlockedThreadWalker

    init(periodNanoseconds: UInt64, maxDepth: Int) {
        intervalNanoseconds = periodNanoseconds
        blockedWalker = BlockedThreadWalker(maxDepth: maxDepth)
    }

    mutating func arrived(_ sample: Sample) -> Int {
        if let cpu = sample.cpuNanoseconds { cpuWhenStackKnown[sample.tid] = cpu }
        return signalOutstanding.removeValue(forKey: sample.tid)?.owedTicks ?? 0
    }

    mutating func threadEnded(_ tid: Int32) {
        cpuWhenStackKnown[tid] = nil
        cpuAtLastTick[tid] = nil
        voluntarySwitches[tid] = nil
        runnerUntil[tid] = nil
        signalOutstanding[tid] = nil
    }

    /// Whether `tid`, which ran less than half the time, slept since it was last asked about:
    /// a thread that did not give up its core of its own accord was preempted (more threads
    /// than cores), not sleeping, and can be signalled as a running one. Unknown counts as slept.
    /// One found preempted is taken as a runner for `runnerTicks` ticks while it keeps at least
    /// `runnerShare` of the time.
    private mutating func sleeps(_ tid: Int32, share: Double, at now: UInt64) -> Bool {
        if let until = runnerUntil[tid], now < until, share >= Self.runnerShare { return false }
        guard let switches = ThreadDirectory.voluntarySwitches(of: tid) else { return true }
        let before = voluntarySwitches.updateValue(switches, forKey: tid)
        let slept = before.map { switches != $0 } ?? true
        runnerUntil[tid] = slept ? nil : now + Self.runnerTicks * intervalNanoseconds
        return slept
    }

    /// `due` ticks are counted: more than one after a late wake, each with the stack found now.
    mutating func wake(at now: UInt64, due: Int, threads: ArraySlice<Int32>, routing: inout SampleRouting,
                       stopRequested: () -> Bool) {
        missedTicks += due - 1
        for tid in threads {
            // A stop asked for meanwhile: the thread that asked waits for the sampler thread,
            // and its stack there is the profiler's own, not the program's.
            if stopRequested() { return }
            if let sent = signalOutstanding[tid]?.sentAt, now &- sent < Self.outstandingSignalNanoseconds {
                signalOutstanding[tid]?.owedTicks += due
                continue
            }
            let cpu = ss_thread_cpu_time_ns(tid)
            guard cpu >= 0 else { continue }
            let before = cpuAtLastTick.updateValue((cpu, now), forKey: tid)
            if let known = cpuWhenStackKnown[tid], routing.aggregator.hasStack(tid), cpu - known < Self.unmovedNanoseconds {
                cpuWhenStackKnown[tid] = cpu
                routing.repeatLast(tid, at: now, times: due)
                continue
            }
            // A thread that ran less than half the time since it was last looked at mostly sleeps:
            // caught running, it is most likely on its way into or out of a sleep (in the kernel,
            // where a signal would end that sleep with EINTR). It is looked at again for up to
            // 250 us, and walked once it blocks. One that ran less than a twentieth of the time
            // (or is first seen now) is in the kernel nearly all the time it runs: it is never
            // signalled, and a tick that finds it running to the end is skipped and counted.
            // Over a period at least: two looks close together (a late sampler catching up)
            // would make a few microseconds in the kernel look like a busy thread.
            // One that ran less than half the time without ever giving up its core of its own
            // accord was kept off it by other threads (more threads than cores): a runner.
            let share = before.map { Double(cpu - $0.cpu) / Double(max(intervalNanoseconds, now &- $0.at)) } ?? 0
            let quiet = share < 0.05
            let sleeper = share < 0.5 && (quiet || sleeps(tid, share: share, at: now))
            switch look(at: tid, cpu: cpu, now: now, patience: sleeper ? Self.sleeperPatienceNanoseconds : 0, maySignal: !quiet) {
            case .running: signal(tid, at: now, due: due)
            case .walked:
                if stopRequested() { return }
                let sample = Sample(blockedWalker.sample)
                _ = arrived(sample)
                routing.take(sample, owedTicks: due - 1)
            case .unsettled, .waking: skippedTicks += due
            case .gone: break
            }
        }
    }

    /// Looks at a thread, and while it runs, again every 10 us (plus timer slack) until
    /// `patience` ns have passed; the sampler sleeps in between, leaving the core to the thread.
    /// A thread looked at with patience that still runs at the end is `.waking` (runnable inside
    /// the system call it is leaving, which a signal could end with EINTR) unless it `maySignal`
    /// and is on a core at that moment (its CPU time moves across one more look).
    private func look(at tid: Int32, cpu: Int64, now: UInt64, patience: UInt64, maySignal: Bool) -> BlockedThreadWalker.Look {
        var found = blockedWalker.look(at: tid, cpu: cpu, now: now)
        while case .running = found, ss_now_ns() &- now < patience {
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000)
            nanosleep(&pause, nil)
            let moved = ss_thread_cpu_time_ns(tid)
            guard moved >= 0 else { return .gone }
            found = blockedWalker.look(at: tid, cpu: moved, now: now)
        }
        guard case .running = found, patience > 0 else { return found }
        guard maySignal else { return .waking }
        let before = ss_thread_cpu_time_ns(tid)
        guard let position = BlockedThreadWalker.position(of: tid) else {
            return ss_thread_cpu_time_ns(tid) > before ? .running : .waking
        }
        return position == nil ? .gone : .waking
    }

    /// Signals `tid` for a sample that stands for `due` ticks. A thread that blocks the signal
    /// is not signalled (the engine refuses): its ticks are skipped, counted.
    private mutating func signal(_ tid: Int32, at now: UInt64, due: Int) {
        let status = ss_signal_thread(tid)
        if status == 0 {
            signalOutstanding[tid] = OutstandingSignal(sentAt: now, owedTicks: due - 1)
        } else if status == -EAGAIN {
            skippedTicks += due
        }
    }
}
