import StackSampler

/// A back end the daemon hands every window to (Pyroscope, OTLP): queued on a `PushThread`,
/// never blocking, with counters for the window reports and the status object.
package protocol WindowPusher: AnyObject, Sendable {
    /// Queues what `profile` (one window) gives this back end; returns at once.
    func push(_ profile: Profile)
    /// The name of its figures in window reports and the status object (`push`, `otlp_push`).
    var reportName: String { get }
    /// What its counters count, plural (`windows`, `requests`).
    var unit: String { get }
    /// The thread that sends, retries and counts.
    var control: any PushControl { get }
}

/// A push thread's figures and its stop, whatever it sends.
package protocol PushControl: Sendable {
    /// What was pushed, retried and dropped so far.
    var counters: PushCounters { get }
    /// What waits to be pushed, the one being sent included.
    var pending: Int { get }
    /// The last failure (no response, or the status and the server's text), nil if none yet.
    var lastError: String? { get }
    /// From now on takes no payload (later pushes are dropped and counted), and pushes what is
    /// queued until `end` (`ss_now_ns`), retrying as usual meanwhile.
    func beginStop(until end: UInt64)
    /// Waits until the thread has finished, or until `limit` (`ss_now_ns`); whether it finished.
    func waitUntilFinished(before limit: UInt64) -> Bool
    /// Ends the request on its way, if any.
    func cancelRequest()
    /// Counts what still waits, and what is on its way, as dropped at stop; the final counters.
    func abandon() -> PushCounters
}

extension PushControl {
    /// Pushes what is queued for at most `deadline`, then counts the rest as dropped at stop;
    /// returns the final counters (`PushStop.all` of this one). Later pushes are dropped and counted.
    package func stop(deadline: Duration) -> PushCounters {
        PushStop.all([self], deadline: deadline)[0]
    }
}

extension WindowPusher {
    /// What was pushed, retried and dropped so far.
    package var counters: PushCounters { control.counters }
    /// What waits to be pushed, the one being sent included.
    package var pending: Int { control.pending }
    /// The last failure, nil if none yet.
    package var lastError: String? { control.lastError }
    /// Pushes what is queued for at most `deadline` (retrying as usual meanwhile), then gives up:
    /// what still waits, and what is on its way, is counted in `droppedAtStop`.
    @discardableResult
    package func stop(deadline: Duration) -> PushCounters { control.stop(deadline: deadline) }
}
