import CEngineHeader
import Glibc

/// The context-switch rings wall mode gives its threads (`ss_switch_ring_*`, through `WallProbes`), and the reads of
/// them: at most `bound` open at once (each is a page of control and one of data, which the
/// kernel counts as locked memory of the user's perf budget); none asked for again once the
/// kernel, or a sandbox, refused the process its first.
final class SwitchRings {
    /// Rings open at most (`ss_switch_ring_bound`).
    let bound: Int
    private let probes: any WallProbes
    private(set) var openCount = 0
    /// Whether the kernel (or a sandbox) refuses rings to this process: none is asked for again
    /// (each thread without one would ask again at every wake that lends rings).
    private(set) var refused = false

    /// The rings of a session that asks the kernel through `probes`.
    init(probes: any WallProbes) {
        self.probes = probes
        bound = probes.fixed.switchRingBound
    }

    /// Whether every ring the bound allows is open.
    var full: Bool { openCount >= bound }

    /// A ring for `tid`, if one may be opened and the kernel gives it. A refusal with none open
    /// means the process may have none; with some open, it is the locked-memory budget, which a
    /// ring given back frees.
    func open(for tid: Int32) -> OpaquePointer? {
        guard !refused, !full else { return nil }
        let (ring, error) = probes.openSwitchRing(for: tid)
        if let ring {
            openCount += 1
            return ring
        }
        if openCount == 0, [EACCES, EPERM, ENOSYS, ENODEV, EINVAL, EOPNOTSUPP].contains(-error) { refused = true }
        return nil
    }

    /// Gives `ring` back.
    func close(_ ring: OpaquePointer) {
        probes.closeSwitchRing(ring)
        openCount -= 1
    }

    /// Takes in the thread's new context switches, those a look read first included (oldest
    /// first; its place is then the last one's).
    func takeSwitches(of thread: WallThread) -> [ss_switch] {
        guard let ring = thread.ring else { return [] }
        var records: [ss_switch] = []
        swap(&records, &thread.backlog)
        probes.readSwitches(ring, into: &records)
        if let last = records.last { thread.place = WallThread.Place(last) }
        thread.switchesInSpan += records.count
        return records
    }

    /// Between the wakes that take switches in: the thread's ring is read into its backlog if it
    /// is filling (a full ring loses records), else left for the wake.
    func readIfFilling(_ thread: WallThread) {
        guard let ring = thread.ring, probes.switchRingFilling(ring) else { return }
        probes.readSwitches(ring, into: &thread.backlog)
    }

    /// The thread's newest switch not taken in yet, read or not (none: nil).
    func newest(of thread: WallThread) -> ss_switch? {
        thread.ring.flatMap { probes.newestSwitch(in: $0) } ?? thread.backlog.last
    }

    /// Whether the thread has switches not taken in yet (read by a look, or still in its ring).
    func hasUnread(_ thread: WallThread) -> Bool {
        !thread.backlog.isEmpty || thread.ring.map { probes.hasUnreadSwitches($0) } ?? false
    }
}
