import Synchronization

/// The last stall reports of this process, for the daemon's stalls endpoint: at most
/// `capacity` texts, oldest dropped first, with the count of all reports written.
package enum RecentStalls {
    /// Reports kept.
    package static let capacity = 32
    private static let kept = Mutex<(reports: [String], total: Int)>(([], 0))

    /// Keeps `report`, dropping the oldest beyond `capacity`.
    static func add(_ report: String) {
        kept.withLock { kept in
            kept.reports.append(report)
            if kept.reports.count > capacity { kept.reports.removeFirst() }
            kept.total += 1
        }
    }

    /// The reports kept, oldest first, and how many were written since the process started.
    package static var reports: (texts: [String], total: Int) {
        kept.withLock { ($0.reports, $0.total) }
    }
}
