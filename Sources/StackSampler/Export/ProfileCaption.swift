/// How exporters title a profile.
extension Profile {
    /// The command, or a generic title when it is unknown.
    var headline: String {
        command.isEmpty ? "Profile" : command
    }

    /// `cpu mode, period 10ms, 1234 samples, 2025-06-01 14:03:07 UTC`, leaving out what is unknown.
    var settingsLine: String {
        var parts: [String] = []
        if let configuration { parts.append(configuration.samplingDescription) }
        parts.append("\(sampleCount) samples")
        if realtimeStartNanoseconds > 0 { parts.append(utcDateText(nanosecondsSinceEpoch: realtimeStartNanoseconds)) }
        return parts.joined(separator: ", ")
    }

    /// What the profiler measured of itself, on one line, when this profile was recorded here
    /// (not read from collapsed stacks): `rate 99.6/s (asked 100), handler 1.3 µs median, 9.8 µs p99, 0 of 1234 samples lost or cut`.
    var measurementLine: String? {
        guard let configuration, configuration.event == nil, overhead != Overhead() else { return nil }
        let asked = 1e9 / Double(configuration.periodNanoseconds)
        let rates = threads.filter { $0.samples > 0 }.map { effectiveRate(of: $0) }.filter { $0 > 0 }.sorted()
        let rate = rates.isEmpty ? "" : "rate \(decimalText(rates[rates.count / 2], decimals: 1))/s per thread (asked \(decimalText(asked, decimals: 1))), "
        let lost = losses.droppedSamples + losses.truncatedSamples + losses.leafOnlySamples + losses.unwindFailures + losses.unwindFaults
        return rate + "handler \(decimalText(Double(overhead.handlerMedianNanoseconds) / 1000, decimals: 1)) µs median, "
            + "\(decimalText(Double(overhead.handlerP99Nanoseconds) / 1000, decimals: 1)) µs p99, "
            + "\(lost) of \(sampleCount + losses.droppedSamples) samples lost or cut"
    }
}
