/// The calls of one span of a session (a continuous window, or a request's span), before names
/// are attached: those that ended in it, those still running at its end, and the counts.
struct WindowCalls: Sendable {
    /// Invocations that ended in the span, in the order they closed (thread: index of the span's thread records).
    var closed: [ClosedInvocation]
    /// Wanted invocations still open at the span's end, their duration so far.
    var running: [ClosedInvocation]
    /// What tracking kept, left out and dropped in the span (the cap holds per span).
    var counts: Profile.InvocationCounts
}
