/// Which calls were slow in a profile's span: for every function seen as a call, the count and
/// the duration distribution of its calls that ended in the span, and its slowest calls with
/// their thread and call path; and the calls still running at the span's end.
///
/// Built from `Profile.invocations` (at most the tracker's cap per window; `counts.dropped` says
/// how many ended beyond it, left out of the distribution) and `Profile.runningInvocations`.
/// Durations are the reconstructed ones: within max(10 %, 2 periods) of the truth. Cut calls
/// (a start or end among lost ticks, `Invocation.isCut`) are only counted: their durations are
/// lower bounds, and they may be parts of one call.
package struct CallTable: Sendable {
    /// One call.
    package struct Call: Sendable, Hashable {
        /// The function's name.
        package var name: String
        /// Start, in ns since the Unix epoch.
        package var startUnixNanoseconds: UInt64
        /// Duration (so far, for a running call), in ns.
        package var durationNanoseconds: UInt64
        /// The thread's name and kernel id.
        package var threadName: String
        package var tid: Int32
        /// Samples it was seen in.
        package var samples: Int
        /// Its callers kept by the filters, root first; "…" first when the chain is cut (a caller dropped at the cap).
        package var path: [String]
    }

    /// One function's calls.
    package struct Function: Sendable, Hashable {
        /// The function's name.
        package var name: String
        /// Whole calls that ended in the span (the figures below are theirs).
        package var count: Int
        /// Cut calls that ended in the span, left out of the figures.
        package var cut: Int
        /// Percentiles (nearest rank) and maximum of their durations, in ns.
        package var p50Nanoseconds: UInt64
        package var p90Nanoseconds: UInt64
        package var p99Nanoseconds: UInt64
        package var maxNanoseconds: UInt64
        /// Their durations, for adding windows together.
        package var histogram: DurationHistogram
        /// The slowest, longest first.
        package var slowest: [Call]
    }

    /// Every function, highest p99 first (then count, then name).
    package var functions: [Function]
    /// Calls running at the span's end, longest first (at most `slowest` of them).
    package var running: [Call]
    /// What tracking kept, left out and dropped in the span.
    package var counts: Profile.InvocationCounts
    /// The span: start in ns since the Unix epoch, and length in ns.
    package var startUnixNanoseconds: UInt64
    package var durationNanoseconds: UInt64
    /// The sampling period, in ns (the durations' resolution).
    package var periodNanoseconds: UInt64

    /// The table of `profile`'s calls, keeping the `slowest` slowest calls of each function.
    package init(_ profile: Profile, slowest: Int = 20) {
        let byID = Dictionary((profile.invocations + profile.runningInvocations).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        func call(_ invocation: Profile.Invocation) -> Call {
            var path: [String] = []
            var parent = invocation.parentID
            while let id = parent {
                guard let caller = byID[id] else {
                    path.append("…")
                    break
                }
                path.append(caller.name)
                parent = caller.parentID
            }
            let thread = profile.threads.indices.contains(invocation.thread) ? profile.threads[invocation.thread] : nil
            return Call(name: invocation.name,
                        startUnixNanoseconds: profile.realtimeStartNanoseconds &+ invocation.startNanoseconds &- profile.startNanoseconds,
                        durationNanoseconds: invocation.durationNanoseconds, threadName: thread?.name ?? "?", tid: thread?.id ?? 0,
                        samples: invocation.samples, path: path.reversed())
        }
        var byName: [String: [Profile.Invocation]] = [:]
        for invocation in profile.invocations { byName[invocation.name, default: []].append(invocation) }
        functions = byName.map { name, invocations in
            let sorted = invocations.filter { !$0.isCut }.sorted { $0.durationNanoseconds > $1.durationNanoseconds }
            let durations = sorted.map(\.durationNanoseconds).reversed() as [UInt64]
            func percentile(_ fraction: Double) -> UInt64 {
                durations.isEmpty ? 0 : durations[max(0, Int((fraction * Double(durations.count)).rounded(.up)) - 1)]
            }
            var histogram = DurationHistogram()
            for duration in durations { histogram.add(duration) }
            return Function(name: name, count: durations.count, cut: invocations.count - sorted.count,
                            p50Nanoseconds: percentile(0.5), p90Nanoseconds: percentile(0.9),
                            p99Nanoseconds: percentile(0.99), maxNanoseconds: durations.last ?? 0, histogram: histogram,
                            slowest: sorted.prefix(slowest).map(call))
        }.sorted { ($1.p99Nanoseconds, $1.count, $0.name) < ($0.p99Nanoseconds, $0.count, $1.name) }
        running = profile.runningInvocations.sorted { $0.durationNanoseconds > $1.durationNanoseconds }.prefix(slowest).map(call)
        counts = profile.invocationCounts
        startUnixNanoseconds = profile.realtimeStartNanoseconds
        durationNanoseconds = profile.durationNanoseconds
        periodNanoseconds = profile.configuration?.periodNanoseconds ?? 0
    }
}
