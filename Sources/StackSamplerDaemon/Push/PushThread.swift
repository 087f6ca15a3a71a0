import CEngineHeader
import Glibc
import StackSampler

/// What a back end's pusher makes of its payloads and says of its refusals; the thread does the rest.
struct PushDestination<Payload>: Sendable {
    /// Where pushes go, for messages (the configured URL).
    var name: String
    /// What is queued and counted, plural ("windows", "requests").
    var unit: String
    /// The request of one payload, made at each attempt (without the lock), with a time bound in ms.
    var request: @Sendable (Payload, Int) throws(PushError) -> HTTPClientRequest
    /// The stderr line for a refusal (`reason`: the status and the server's text).
    var refusal: @Sendable (String) -> String
}

/// Sends queued payloads to a back end from a thread of its own that is never sampled.
///
/// `push(_:)` only queues the payload and returns: a back end that is down or slow never blocks
/// the caller (the window thread) nor sampling. The queue is bounded (a new payload drops the
/// oldest waiting one); a failed attempt is retried after a backoff (`PushPolicy`), up to a number
/// of attempts; a refusal not worth retrying (a 4xx other than 408 and 429) is said once on stderr
/// and not retried. `counters` says what was pushed, retried and dropped. `stop(deadline:)`
/// (or `PushStop.all` for several threads at once) flushes within a bounded time.
final class PushThread<Payload>: PushControl, @unchecked Sendable {
    /// The retry policy.
    let policy: PushPolicy
    /// Payloads waiting at most.
    let queueLength: Int
    private let destination: PushDestination<Payload>
    private let transport: any HTTPTransport
    private let lock = WaitLock()
    // Under `lock`:
    private var schedule: PushSchedule<Payload>
    private var inFlight = 0
    private var stopDeadline: UInt64?
    private var abandoned = false
    private var finished = false
    private var lastErrorText: String?
    /// Refusals already said on stderr (by status line), and whether an outage was said.
    private var refusalsSaid: Set<String> = []
    private var outageSaid = false
    /// Cancels the request in flight once `stop`'s time is up.
    private let cancellation = HTTPCancellation()

    /// Starts the thread. `transport` makes the requests (a fake one in tests).
    init(destination: PushDestination<Payload>, queueLength: Int, policy: PushPolicy, transport: any HTTPTransport) throws(PushError) {
        self.destination = destination
        self.queueLength = queueLength
        self.policy = policy
        self.transport = transport
        schedule = PushSchedule(capacity: queueLength, policy: policy)
        // A profiler thread (ProfilerThreads): never attached, sampled or walked in any session.
        let handle: pthread_t
        do {
            handle = try ProfilerThreads.spawn(named: "ss-push") { [self] in run() }
        } catch {
            throw .cannotStart(error.description)
        }
        pthread_detach(handle)
    }

    /// Queues `payload`; returns at once. After `stop`, the payload is counted as dropped.
    func push(_ payload: Payload) {
        lock.withLock {
            guard stopDeadline == nil else {
                schedule.dropAtStop()
                return
            }
            schedule.enqueue(payload)
            lock.broadcast()
        }
    }

    /// What was pushed, retried and dropped so far.
    var counters: PushCounters { lock.withLock { schedule.counters } }

    /// Payloads waiting to be pushed, the one being sent included.
    var pending: Int { lock.withLock { schedule.waiting.count + inFlight } }

    /// The last failure (no response, or the status and the server's text), nil if none yet.
    var lastError: String? { lock.withLock { lastErrorText } }

    /// From now on takes no payload, and pushes what is queued until `end` (`ss_now_ns`), retrying as usual meanwhile.
    func beginStop(until end: UInt64) {
        lock.withLock {
            if stopDeadline == nil { stopDeadline = end }
            lock.broadcast()
        }
    }

    /// Waits until the thread has finished, or until `limit` (`ss_now_ns`); whether it finished.
    func waitUntilFinished(before limit: UInt64) -> Bool {
        lock.withLock {
            while !finished && ss_now_ns() < limit { lock.wait(until: limit) }
            return finished
        }
    }

    /// Ends the request on its way, if any (libcurl notices within about a second).
    func cancelRequest() {
        cancellation.cancel()
    }

    /// Counts what still waits, and what is on its way, as dropped at stop (once); the final counters.
    func abandon() -> PushCounters {
        lock.withLock {
            if !finished && !abandoned {
                abandoned = true
                schedule.abandon(inFlight: inFlight)
            }
            return schedule.counters
        }
    }

    /// The push thread's loop.
    private func run() {
        lock.withLock {
            while true {
                let now = ss_now_ns()
                if let end = stopDeadline, now >= end || schedule.waiting.isEmpty {
                    if !schedule.waiting.isEmpty { schedule.abandon(inFlight: 0) }
                    break
                }
                switch schedule.next(now: now) {
                case .idle: lock.wait(until: nil)
                case .wait(let until): lock.wait(until: stopDeadline.map { min($0, until) } ?? until)
                case .send(let pending):
                    inFlight = 1
                    let timeout = stopDeadline.map { min(policy.requestTimeout.wholeNanoseconds, $0 &- now) } ?? policy.requestTimeout.wholeNanoseconds
                    lock.unlocked { attempt(pending, timeoutNanoseconds: timeout) }
                    inFlight = 0
                }
                if abandoned { break }
            }
            finished = true
            lock.broadcast()
        }
    }

    /// Sends one payload (called without the lock) and records what came of it (with it).
    private func attempt(_ pending: PushSchedule<Payload>.Pending, timeoutNanoseconds: UInt64) {
        let outcome: PushOutcome
        do throws(PushError) {
            var request = try destination.request(pending.payload, Int(max(1, timeoutNanoseconds / 1_000_000)))
            request.cancellation = cancellation
            outcome = PushOutcome.of(transport.send(request))
        } catch {
            outcome = .failed(error.description)
        }
        lock.withLock {
            guard !abandoned else { return }
            schedule.finish(pending, outcome, now: ss_now_ns())
            report(outcome)
        }
    }

    /// Says on stderr, once each, a refusal, an outage, and the end of an outage (under the lock).
    private func report(_ outcome: PushOutcome) {
        switch outcome {
        case .pushed:
            if outageSaid {
                outageSaid = false
                StandardError.report("pushes to \(destination.name) succeed again")
            }
        case .failed(let reason):
            lastErrorText = reason
            if !outageSaid {
                outageSaid = true
                StandardError.report("cannot push to \(destination.name) (\(reason)); retrying with backoff, keeping up to \(queueLength) \(destination.unit)")
            }
        case .rejected(let reason):
            lastErrorText = reason
            let status = String(reason.prefix { $0 != ":" })
            if refusalsSaid.insert(status).inserted { StandardError.report(destination.refusal(reason)) }
        }
    }
}
