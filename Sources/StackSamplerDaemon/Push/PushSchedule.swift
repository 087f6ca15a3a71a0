/// How hard the pusher tries: backoff between the attempts of one window, attempts per window,
/// and the time one request may take.
package struct PushPolicy: Sendable, Equatable {
    /// The wait after a window's first failed attempt; doubled after each further one.
    package var initialBackoff: Duration
    /// The longest wait between two attempts.
    package var maxBackoff: Duration
    /// Attempts per window, the first included; then the window is dropped and counted.
    package var maxAttempts: Int
    /// The longest one request may take, connection included.
    package var requestTimeout: Duration

    /// 0.5 s doubling to 30 s, 8 attempts (a window is kept about a minute of back-end outage), 10 s per request.
    package init(initialBackoff: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(30), maxAttempts: Int = 8,
                requestTimeout: Duration = .seconds(10)) {
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
        self.maxAttempts = max(1, maxAttempts)
        self.requestTimeout = requestTimeout
    }

    /// The wait, in ns, after a window's `failures`-th failed attempt (1: `initialBackoff`).
    package func backoffNanoseconds(afterFailures failures: Int) -> UInt64 {
        let initial = initialBackoff.wholeNanoseconds, cap = maxBackoff.wholeNanoseconds
        var wait = initial
        for _ in 1..<max(1, failures) where wait < cap { wait = wait &* 2 }
        return min(wait, cap)
    }
}

/// What the pusher did, since it started.
package struct PushCounters: Sendable, Equatable {
    /// Windows the back end accepted (2xx).
    package var pushed = 0
    /// Attempts that failed and were followed by another one of the same window.
    package var retried = 0
    /// Windows dropped from a full queue for a newer one (the oldest goes).
    package var droppedQueueFull = 0
    /// Windows the back end refused with a status not worth retrying (a 4xx other than 408 and 429).
    package var droppedRejected = 0
    /// Windows dropped after `PushPolicy.maxAttempts` failed attempts.
    package var droppedGaveUp = 0
    /// Windows still waiting or on their way when `stop(deadline:)`'s time was up.
    package var droppedAtStop = 0

    /// A record of nothing.
    package init() {}

    /// Every window that was not pushed, whatever the reason.
    package var dropped: Int { droppedQueueFull + droppedRejected + droppedGaveUp + droppedAtStop }
}

/// What one attempt came to.
enum PushOutcome: Equatable {
    /// Accepted.
    case pushed
    /// Worth another attempt: no response (connection refused, timeout), a 5xx, a 408 or a 429.
    case failed(String)
    /// Not worth another: the same request would be refused again (a 4xx other than 408 and 429,
    /// a redirect, which is not followed).
    case rejected(String)

    /// The outcome of `result`. 429 (too many requests, or Pyroscope's ingestion limit) and 408
    /// (Pyroscope's answer to a body it could not read in time) are transient; another 4xx says
    /// the request itself is wrong (a bad name, bad credentials, a body too large).
    static func of(_ result: Result<HTTPClientResponse, HTTPClientError>) -> PushOutcome {
        switch result {
        case .failure(let error): return .failed(error.description)
        case .success(let response):
            let detail = response.text.isEmpty ? "" : ": \(String(response.text.prefix(300)))"
            switch response.status {
            case 200..<300: return .pushed
            case 408, 429, 500...: return .failed("HTTP \(response.status)\(detail)")
            default: return .rejected("HTTP \(response.status)\(detail)")
            }
        }
    }
}

/// The pusher's queue and retry schedule, without threads or clocks: times are given (monotonic
/// ns), so that tests drive it with a fake clock. Windows wait in order; the one being sent is
/// out of the queue; a window that failed goes back to the head until its backoff has passed. A
/// window arriving at a full queue drops the oldest waiting one.
struct PushSchedule<Payload> {
    /// A window waiting, with its attempts so far.
    struct Pending {
        var payload: Payload
        /// Failed attempts so far.
        var failures = 0
        /// Not to be sent before this time.
        var notBefore: UInt64 = 0
    }

    /// What to do next.
    enum Next {
        /// Send this window now (it has left the queue; report with `finish`).
        case send(Pending)
        /// Nothing is due before this time.
        case wait(until: UInt64)
        /// The queue is empty.
        case idle
    }

    let capacity: Int
    let policy: PushPolicy
    private(set) var waiting: [Pending] = []
    private(set) var counters = PushCounters()

    init(capacity: Int, policy: PushPolicy) {
        self.capacity = max(1, capacity)
        self.policy = policy
    }

    /// Queues a new window, dropping the oldest waiting one when full.
    mutating func enqueue(_ payload: Payload) {
        waiting.append(Pending(payload: payload))
        trim()
    }

    /// The window to send at `now`, or how long to wait.
    mutating func next(now: UInt64) -> Next {
        guard let head = waiting.first else { return .idle }
        guard head.notBefore <= now else { return .wait(until: head.notBefore) }
        waiting.removeFirst()
        return .send(head)
    }

    /// Records the outcome of sending `pending` at `now`.
    mutating func finish(_ pending: Pending, _ outcome: PushOutcome, now: UInt64) {
        switch outcome {
        case .pushed: counters.pushed += 1
        case .rejected: counters.droppedRejected += 1
        case .failed:
            var pending = pending
            pending.failures += 1
            guard pending.failures < policy.maxAttempts else {
                counters.droppedGaveUp += 1
                return
            }
            counters.retried += 1
            pending.notBefore = now &+ policy.backoffNanoseconds(afterFailures: pending.failures)
            waiting.insert(pending, at: 0)
            trim()
        }
    }

    /// Drops every waiting window, and `inFlight` more being sent, as lost at stop.
    mutating func abandon(inFlight: Int) {
        counters.droppedAtStop += waiting.count + inFlight
        waiting.removeAll()
    }

    /// Counts a window that arrived after the stop as lost at stop.
    mutating func dropAtStop() { counters.droppedAtStop += 1 }

    private mutating func trim() {
        while waiting.count > capacity {
            waiting.removeFirst()
            counters.droppedQueueFull += 1
        }
    }
}
