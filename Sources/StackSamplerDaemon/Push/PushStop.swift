import CEngineHeader

/// Stops push threads together, so that a session's end waits for the slowest of them, not for
/// the sum: every thread is told at once and sends what waits until one deadline; then the
/// requests still on their way are cancelled, all at once, and given one grace between them
/// to end (libcurl notices a cancellation within about a second); what is left then is
/// counted as dropped at stop.
package enum PushStop {
    /// How long cancelled requests are waited for, after the deadline.
    package static let grace = Duration.milliseconds(1500)

    /// Stops `controls` within `deadline` plus one `grace`, whatever their number; each one's final
    /// counters, in order.
    package static func all(_ controls: [any PushControl], deadline: Duration, grace: Duration = grace) -> [PushCounters] {
        let end = ss_now_ns() &+ deadline.wholeNanoseconds
        for control in controls { control.beginStop(until: end) }
        let unfinished = controls.filter { !$0.waitUntilFinished(before: end) }
        for control in unfinished { control.cancelRequest() }
        let graceEnd = ss_now_ns() &+ grace.wholeNanoseconds
        for control in unfinished { _ = control.waitUntilFinished(before: graceEnd) }
        return controls.map { $0.abandon() }
    }
}
