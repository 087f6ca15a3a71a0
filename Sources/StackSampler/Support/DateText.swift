import Glibc

/// `2025-06-01 14:03:07 UTC` for a time in ns since the Unix epoch, without Foundation.
func utcDateText(nanosecondsSinceEpoch: UInt64) -> String {
    var seconds = time_t(nanosecondsSinceEpoch / 1_000_000_000)
    var parts = tm()
    guard gmtime_r(&seconds, &parts) != nil else { return "" }
    func padded(_ value: Int32, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
    return "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1, 2))-\(padded(parts.tm_mday, 2)) "
        + "\(padded(parts.tm_hour, 2)):\(padded(parts.tm_min, 2)):\(padded(parts.tm_sec, 2)) UTC"
}
