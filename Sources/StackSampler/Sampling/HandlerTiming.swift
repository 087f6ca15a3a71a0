import CEngineHeader

/// Time the signal handler spent per sample, from the engine's histogram
/// (100 ns buckets), as the difference between two snapshots.
struct HandlerTiming: Sendable {
    private let buckets: [UInt64]

    /// No sample timed.
    static let zero = HandlerTiming(buckets: [UInt64](repeating: 0, count: Int(SS_HANDLER_HISTOGRAM_BUCKETS)))

    /// The engine's histogram now.
    static func snapshot() -> HandlerTiming {
        var buckets = [UInt64](repeating: 0, count: Int(SS_HANDLER_HISTOGRAM_BUCKETS))
        ss_handler_histogram(&buckets)
        return HandlerTiming(buckets: buckets)
    }

    /// What was counted between `earlier` and this snapshot.
    func since(_ earlier: HandlerTiming) -> HandlerTiming {
        HandlerTiming(buckets: zip(buckets, earlier.buckets).map { $0 &- $1 })
    }

    /// The handlers' time in all, in ns, each sample counted at the middle of its bucket.
    var totalNanoseconds: UInt64 {
        buckets.enumerated().reduce(0) { total, bucket in
            total + bucket.element * (UInt64(bucket.offset) * UInt64(SS_HANDLER_HISTOGRAM_BUCKET_NS) + UInt64(SS_HANDLER_HISTOGRAM_BUCKET_NS) / 2)
        }
    }

    /// Samples timed.
    var count: UInt64 { buckets.reduce(0, +) }

    /// The time (upper edge of its bucket, in ns) below which `fraction` of the samples fall.
    func percentile(_ fraction: Double) -> UInt64 {
        let total = count
        guard total > 0 else { return 0 }
        let target = UInt64((Double(total) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (index, bucketCount) in buckets.enumerated() {
            seen += bucketCount
            if seen >= max(target, 1) { return UInt64(index + 1) * UInt64(SS_HANDLER_HISTOGRAM_BUCKET_NS) }
        }
        return UInt64(buckets.count) * UInt64(SS_HANDLER_HISTOGRAM_BUCKET_NS)
    }
}
