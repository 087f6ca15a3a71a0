import Glibc

/// `2025-06-01 14:03:07 UTC` for a time in ns since the Unix epoch, without Foundation.
func utcDateText(nanosecondsSinceEpoch: UInt64) -> String {
    guard let parts = utcParts(nanosecondsSinceEpoch) else { return "" }
    return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2)) "
        + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)) UTC"
}

/// `20250601T140307.123Z` for a time in ns since the Unix epoch: UTC, sortable as text, and
/// fit for a file name (no colons, no spaces).
package func sortableUTCStamp(nanosecondsSinceEpoch: UInt64) -> String {
    guard let parts = utcParts(nanosecondsSinceEpoch) else { return String(nanosecondsSinceEpoch) }
    let milliseconds = Int32(nanosecondsSinceEpoch / 1_000_000 % 1000)
    return "\(padded(parts.tm_year + 1900, 4))\(padded(parts.tm_mon + 1, 2))\(padded(parts.tm_mday, 2))T"
        + "\(padded(parts.tm_hour, 2))\(padded(parts.tm_min, 2))\(padded(parts.tm_sec, 2)).\(padded(milliseconds, 3))Z"
}

/// The calendar fields of a time in ns since the Unix epoch, in UTC.
private func utcParts(_ nanosecondsSinceEpoch: UInt64) -> tm? {
    var seconds = time_t(nanosecondsSinceEpoch / 1_000_000_000)
    var parts = tm()
    return gmtime_r(&seconds, &parts) == nil ? nil : parts
}

/// `value` in decimal, zero-padded on the left to `width` digits.
private func padded(_ value: Int32, _ width: Int) -> String {
    let digits = String(value)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
}
