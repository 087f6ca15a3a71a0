/// Invocations laid out for trace viewers, which want each thread's calls strictly nested:
/// a call within its caller's time, a call after its previous sibling's end.
///
/// Reconstructed times nest by construction (a callee's samples are among its caller's), but
/// each span is padded by P/2 on both sides, so sampling jitter (a sample less than P after the
/// previous one) makes a call overlap its previous sibling by a fraction of a period. Such
/// starts are clamped here, as is any span outside its caller; `Profile.invocations` keep the
/// reconstructed values.
struct InvocationTimeline {
    /// One invocation with its clamped times.
    struct Span {
        /// Index into `Profile.invocations`.
        var invocation: Int
        /// Clamped monotonic start and end, in ns.
        var start: UInt64
        var end: UInt64
        /// Index in the thread's `spans` of the caller, if kept.
        var parent: Int?
    }

    /// One thread's spans, each after its caller (pre-order).
    struct Thread {
        /// Index into `Profile.threads`.
        var thread: Int
        var spans: [Span]
    }

    /// The threads with at least one invocation, in `Profile.invocations` order.
    let threads: [Thread]

    /// Lays out `invocations`, which must be ordered by thread, start and depth (as `Profile.invocations` is).
    init(_ invocations: [Profile.Invocation]) {
        var threads: [Thread] = []
        var start = 0
        while start < invocations.count {
            var end = start
            while end < invocations.count, invocations[end].thread == invocations[start].thread { end += 1 }
            threads.append(Thread(thread: invocations[start].thread, spans: Self.spans(invocations, start..<end)))
            start = end
        }
        self.threads = threads
    }

    /// The clamped spans of `invocations[range]`, all of one thread.
    private static func spans(_ invocations: [Profile.Invocation], _ range: Range<Int>) -> [Span] {
        var spans: [Span] = []
        // The chain of open callers, each with the end of its last callee so far.
        var stack: [(span: Int, calleesEnd: UInt64)] = []
        var rootsEnd: UInt64 = 0
        for index in range {
            let invocation = invocations[index]
            while let top = stack.last, invocations[spans[top.span].invocation].id != invocation.parentID { stack.removeLast() }
            let caller = stack.last.map { spans[$0.span] }
            let start = max(invocation.startNanoseconds, caller?.start ?? 0, stack.last?.calleesEnd ?? rootsEnd)
            let end = max(min(invocation.endNanoseconds, caller?.end ?? .max), start)
            if stack.isEmpty { rootsEnd = end } else { stack[stack.count - 1].calleesEnd = end }
            spans.append(Span(invocation: index, start: start, end: end, parent: stack.last?.span))
            stack.append((spans.count - 1, start))
        }
        return spans
    }

    /// The earliest time of the profile, the zero of exported relative times.
    static func origin(of profile: Profile) -> UInt64 {
        min(profile.startNanoseconds, profile.invocations.lazy.map(\.startNanoseconds).min() ?? .max)
    }
}
