/// Durations counted in log-spaced buckets: four per power of two (each bucket's upper bound is
/// at most 19 % above its lower bound), so that windows' distributions can be added together
/// (`merge`) and read again as percentiles, in a few hundred bytes whatever the call count.
package struct DurationHistogram: Sendable, Hashable {
    /// Calls per bucket index (see `lowerBound(ofBucket:)`); absent buckets hold none.
    package private(set) var buckets: [Int: Int] = [:]
    /// Calls counted.
    package private(set) var count = 0

    /// An empty histogram.
    package init() {}

    /// The bucket of a duration in ns: 4·⌊log₂ d⌋ plus the two bits after the leading one.
    package static func bucket(of nanoseconds: UInt64) -> Int {
        guard nanoseconds >= 4 else { return Int(nanoseconds) }
        let exponent = 63 - nanoseconds.leadingZeroBitCount
        return 4 * exponent + Int((nanoseconds >> (exponent - 2)) & 3)
    }

    /// The smallest duration, in ns, that falls in bucket `index`.
    package static func lowerBound(ofBucket index: Int) -> UInt64 {
        guard index >= 8 else { return UInt64(max(0, index)) } // durations under 4 ns are their own bucket
        return UInt64(4 + index % 4) << (index / 4 - 2)
    }

    /// Counts one duration.
    package mutating func add(_ nanoseconds: UInt64) {
        buckets[Self.bucket(of: nanoseconds), default: 0] += 1
        count += 1
    }

    /// Adds another window's counts to these.
    package mutating func merge(_ other: DurationHistogram) {
        for (index, calls) in other.buckets { buckets[index, default: 0] += calls }
        count += other.count
    }

    /// The lower bound of the bucket holding the `fraction` quantile (nearest rank); 0 when empty.
    package func percentile(_ fraction: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for index in buckets.keys.sorted() {
            seen += buckets[index] ?? 0
            if seen >= rank { return Self.lowerBound(ofBucket: index) }
        }
        return 0
    }
}
