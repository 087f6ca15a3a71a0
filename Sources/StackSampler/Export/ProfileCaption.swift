/// How exporters title a profile.
extension Profile {
    /// The command, or a generic title when it is unknown.
    var headline: String {
        command.isEmpty ? "Profile" : command
    }

    /// `cpu mode, period 10ms, 1234 samples, 2025-06-01 14:03:07 UTC`, leaving out what is unknown.
    var settingsLine: String {
        var parts: [String] = []
        if samplingIsKnown {
            parts.append("\(configuration.mode.rawValue) mode")
            parts.append("period \(PeriodParser.format(nanoseconds: configuration.periodNanoseconds))")
        }
        parts.append("\(sampleCount) samples")
        if realtimeStartNanoseconds > 0 { parts.append(utcDateText(nanosecondsSinceEpoch: realtimeStartNanoseconds)) }
        return parts.joined(separator: ", ")
    }
}
