/// The summary line about invocation tracking.
extension Profile {
    /// What invocation tracking kept, left out and lost, and the stalls reported; nil when it was off.
    var invocationSummary: String? {
        guard let settings = configuration?.invocations else { return nil }
        let counts = invocationCounts
        var parts: [String] = []
        if settings.capacity > 0 {
            parts.append("invocations: \(counts.kept) kept, \(counts.filtered) filtered out, \(counts.dropped) dropped (cap \(settings.capacity))"
                         + (counts.cut > 0 ? ", \(counts.cut) of those kept cut by lost ticks (start or end not known)" : "")
                         + (counts.bridgedGaps > 0 ? ", \(counts.bridgedGaps) lost ticks bridged (alone between two samples: the calls on both sides taken as going on)" : "")
                         + (counts.incompleteSamples > 0 ? ", \(counts.incompleteSamples) samples with incomplete stacks not used" : "")
                         + (counts.trackedSamples > 0 ? "; tracking \(counts.trackingNanoseconds / UInt64(counts.trackedSamples)) ns per sample" : ""))
        }
        if settings.stallThreshold != nil { parts.append("stalls: \(counts.stalls) reported") }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
