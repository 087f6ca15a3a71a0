import CEngineHeader
import Glibc

/// Wall mode: the stack a thread had where it was preempted, copied by the kernel as it left its
/// core (`ss_preempt_ring`), for the ticks it then waits for a core. With it those ticks are
/// counted at that stack exactly; without it, at the counter sample nearest in CPU time, which,
/// when the preemption came within half a counter period of a call's end, lies on the other side
/// of it (the whole wait, several ms on a busy machine, then goes to the wrong call).
///
/// A copy costs the thread about 3 µs at each of its switches, so a thread keeps its ring only
/// while it seldom switches of its own accord: opened when it is first watched (so that a
/// program's first calls are exact too), closed once its voluntary switches come faster than
/// `closingSwitchesPerSecond` over a span, opened again once they are slower than
/// `openingSwitchesPerSecond` over a span with a preemption in it. The kernel takes these copies
/// only for a user allowed to profile it; refused once, no ring is tried again.
final class PreemptionSnapshots {
    /// A thread's ring, and its switches in the current span.
    private struct ThreadState {
        var ring: OpaquePointer?
        var spanStart: UInt64
        var voluntary = 0
        var preempted = 0
        /// When it last got a core (0: not seen): a copy of its next switch is taken after it.
        var onCoreSince: UInt64 = 0
    }

    /// How long a span of a thread's switches is before its ring is opened or closed by them.
    private static let spanNanoseconds: UInt64 = 200_000_000
    /// Voluntary switches a second above which a thread's ring is closed: 3 µs each, 0.1 % of a core.
    private static let closingSwitchesPerSecond: UInt64 = 300
    /// Voluntary switches a second below which a preempted thread's ring is opened again.
    private static let openingSwitchesPerSecond: UInt64 = 100

    private var states: [Int32: ThreadState] = [:]
    private var ringsOpen = 0
    private let maximumRings: Int
    /// Whether the kernel refused a ring for want of permission or support: then none is tried again.
    private var kernelRefused = false
    /// Preemptions whose ticks are counted at the stack copied there.
    private(set) var exact = 0
    /// Preemptions without a usable copy (no ring, the copy lost or too short to walk whole).
    private(set) var withoutCopy = 0
    private let probes: any WallProbes

    /// Copies of stacks, asked of the kernel through `probes`.
    init(probes: any WallProbes) {
        self.probes = probes
        maximumRings = probes.fixed.preemptionRingBound
    }

    deinit {
        for state in states.values { if let ring = state.ring { probes.closePreemptionRing(ring) } }
    }

    /// A thread whose context switches are now read: its ring is opened, if the kernel allows.
    func watch(_ tid: Int32, at now: UInt64) {
        guard states[tid] == nil else { return }
        states[tid] = ThreadState(ring: open(tid), spanStart: now)
    }

    /// The thread ended (or its switches are no longer read): its ring is closed.
    func forget(_ tid: Int32) {
        guard let state = states.removeValue(forKey: tid), let ring = state.ring else { return }
        probes.closePreemptionRing(ring)
        ringsOpen -= 1
    }

    /// The stacks at the preemptions among `records` (the thread's switches taken in at this
    /// wake, oldest first, read up to `read`), each as a sample at the thread's CPU time then
    /// (`cpuAt`), reaching `reach`; the copies up to `read` are dropped. None unless the thread
    /// `takesSignal` (`WallThread.takesSignal`): a thread that blocks the signal from its start is
    /// not sampled, and said so (copies would make it look sampled, and hide it from the
    /// summary's `unsampled:` line).
    func stacks(of tid: Int32, records: [ss_switch], read: UInt64, reach: Int64, takesSignal: Bool,
                cpuAt: (UInt64) -> Int64) -> [WallThread.Known] {
        guard var state = states[tid] else { return [] }
        defer { states[tid] = state }
        var found: [WallThread.Known] = []
        for record in records {
            switch record.kind {
            case SS_SWITCH_IN: state.onCoreSince = record.time_ns
            case SS_SWITCH_OUT_BLOCKED: state.voluntary += 1
            case SS_SWITCH_OUT_PREEMPTED:
                state.preempted += 1
                if let ring = state.ring, takesSignal,
                   let known = walk(ring, tid: tid, since: state.onCoreSince, at: record.time_ns, cpu: cpuAt(record.time_ns), reach: reach) {
                    found.append(known)
                    exact += 1
                } else {
                    withoutCopy += 1
                }
            default: break
            }
        }
        if let ring = state.ring { probes.dropPreemptions(ring, upTo: read) }
        adapt(&state, tid: tid, at: read)
        return found
    }

    /// The copy of the switch at `time` (on the core got at `since`), walked whole, as a sample of
    /// thread `tid` at CPU time `cpu`.
    private func walk(_ ring: OpaquePointer, tid: Int32, since: UInt64, at time: UInt64, cpu: Int64, reach: Int64) -> WallThread.Known? {
        guard var sample = probes.walkPreemption(ring, since: since, at: time) else { return nil }
        sample.tid = tid
        sample.cpuNanoseconds = cpu
        sample.periods = 1
        return WallThread.Known(sample: sample, cpu: cpu, reach: reach)
    }

    /// At the end of a span: the ring closed if the thread switched often of its own accord, or
    /// opened again if it seldom did and was preempted.
    private func adapt(_ state: inout ThreadState, tid: Int32, at now: UInt64) {
        let span = now &- state.spanStart
        guard span >= Self.spanNanoseconds else { return }
        let perSecond = UInt64(state.voluntary) * 1_000_000_000 / span
        if let ring = state.ring, perSecond > Self.closingSwitchesPerSecond {
            probes.closePreemptionRing(ring)
            ringsOpen -= 1
            state.ring = nil
        } else if state.ring == nil, state.preempted > 0, perSecond < Self.openingSwitchesPerSecond {
            state.ring = open(tid)
        }
        state = ThreadState(ring: state.ring, spanStart: now, onCoreSince: state.onCoreSince)
    }

    private func open(_ tid: Int32) -> OpaquePointer? {
        guard !kernelRefused, ringsOpen < maximumRings else { return nil }
        let (opened, error) = probes.openPreemptionRing(for: tid)
        guard let ring = opened else {
            if error == -EACCES || error == -EPERM || error == -ENOENT || error == -EINVAL || error == -EOPNOTSUPP
                || error <= SS_PERF_REFUSED_BY_FILTER { kernelRefused = true }
            return nil
        }
        ringsOpen += 1
        return ring
    }
}
