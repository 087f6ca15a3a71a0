/// Reads and prints sampling periods such as `10ms`, `500us`, `1s`.
package enum PeriodParser {
    private static let units: [(suffix: String, nanoseconds: Double)] = [
        ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9),
    ]

    /// Parses `NUMBER UNIT` (unit ns, us, ms or s; decimals allowed) into a sampling period, in
    /// the range `SessionSettings.period` accepts.
    package static func parse(_ text: String) throws(ProfilerError) -> Duration {
        do {
            return try SessionSettings.period.parse(text, from: .commandLine)
        } catch {
            throw .invalidPeriod(text)
        }
    }

    /// Parses `NUMBER UNIT` (unit ns, us, ms, s, m or h; decimals allowed) into any positive duration.
    package static func parseDuration(_ text: String) throws(ProfilerError) -> Duration {
        let trimmed = text.filter { $0 != " " }
        guard let unit = (units + longUnits).first(where: { trimmed.hasSuffix($0.suffix) && trimmed.count > $0.suffix.count }),
              let number = Double(trimmed.dropLast(unit.suffix.count)), number.isFinite, number > 0
        else { throw .invalidPeriod(text) }
        let nanoseconds = (number * unit.nanoseconds).rounded()
        guard nanoseconds >= 1, nanoseconds < 1e18 else { throw .invalidPeriod(text) }
        return .nanoseconds(Int64(nanoseconds))
    }

    /// Units only durations longer than a sampling period take (checked after the others: `ms` ends in `s`).
    private static let longUnits: [(suffix: String, nanoseconds: Double)] = [("m", 60e9), ("h", 3600e9)]

    /// Prints a duration in the largest unit that keeps it whole (`10ms`, `500us`, `1h`).
    package static func format(_ duration: Duration) -> String {
        format(nanoseconds: duration.wholeNanoseconds)
    }

    /// Prints a period in the largest unit that keeps it whole (`10ms`, `500us`, `1h`).
    package static func format(nanoseconds: UInt64) -> String {
        if nanoseconds % 3_600_000_000_000 == 0, nanoseconds > 0 { return "\(nanoseconds / 3_600_000_000_000)h" }
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000)s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000)us" }
        return "\(nanoseconds)ns"
    }
}
