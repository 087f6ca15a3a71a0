import Glibc
import StackSampler
import Synchronization

/// Pushes every window to an OpenTelemetry collector over OTLP/HTTP (protobuf): the window's
/// profile as an `ExportProfilesServiceRequest` (`OTLPProfilesEncoder`) and the calls that ended
/// in it as an `ExportTraceServiceRequest` (`OTLPTracesEncoder`), each a request of its own on a
/// `PushThread` (bounded queue, backoff, counted drops; `push(_:)` never blocks, and the requests
/// are encoded on the push thread, never on the window's). A call that lasts many windows
/// becomes a span in the window it ends in.
package final class OTLPPusher: WindowPusher {
    /// The settings pushed with.
    package let settings: OTLPSettings
    private let thread: PushThread<PendingExport>
    /// Tells this session's trace and profile ids from another process's: the pid and the
    /// realtime clock at start.
    private let session: UInt64
    /// The realtime offset spans are converted with (see `realtimeOffset(of:)`); nil before the first window.
    private let keptOffset = Mutex<UInt64?>(nil)
    /// Below this, two windows' realtime offsets differ by their measurement's noise, not by a clock change: 1 ms.
    private static let offsetNoise: UInt64 = 1_000_000

    /// Starts the push thread. `policy` defaults to the usual backoff with the signals' longest
    /// timeout per request (each request is held to its own signal's); `transport` makes the
    /// requests (a fake one in tests).
    package init(settings: OTLPSettings, policy: PushPolicy? = nil, transport: any HTTPTransport = HTTPClient()) throws(PushError) {
        self.settings = settings
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        session = (UInt64(UInt32(bitPattern: getpid())) << 40) ^ (UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec))
        let collector = [settings.profiles?.url, settings.traces?.url].compactMap { $0 }.joined(separator: " and ")
        let destination = PushDestination<PendingExport>(
            name: collector, unit: "requests",
            request: { export, timeoutMilliseconds in export.request(settings: settings, timeoutMilliseconds: timeoutMilliseconds) },
            refusal: { reason in
                "\(collector) refused an OTLP request (\(reason)); such requests are dropped, not retried: check the endpoint, "
                    + "OTEL_EXPORTER_OTLP_HEADERS, and that the collector takes this signal (profiles need one with the profiles signal on)"
            })
        thread = try PushThread(destination: destination, queueLength: settings.queueLength,
                                policy: policy ?? PushPolicy(requestTimeout: settings.longestTimeout), transport: transport)
    }

    /// A pusher with the environment's settings (`OTLPSettings.fromEnvironment`), nil when no
    /// OTLP endpoint is given or the SDK is disabled. A bad value is said on stderr (naming the
    /// variable and what to give) and nothing is pushed over OTLP; the rest runs.
    package static func fromEnvironment() -> OTLPPusher? {
        do {
            guard let settings = try OTLPSettings.fromEnvironment() else { return nil }
            return try OTLPPusher(settings: settings)
        } catch {
            StandardError.report(error.description)
            return nil
        }
    }

    /// Queues `profile` (one window) as a profiles request, and its calls (`invocations`) as a
    /// traces request; returns at once.
    package func push(_ profile: Profile) {
        if settings.profiles != nil { thread.push(PendingExport(.profiles, profile, session: session)) }
        pushCalls(profile.invocations, of: profile)
    }

    /// Queues `calls` (ended in the window `profile`, on its monotonic clock and of its threads)
    /// as a traces request; nothing for no call or without a traces endpoint.
    package func pushCalls(_ calls: [Profile.Invocation], of profile: Profile) {
        guard settings.traces != nil, !calls.isEmpty else { return }
        thread.push(PendingExport(.traces(calls, realtimeOffset: realtimeOffset(of: profile)), profile, session: session))
    }

    /// The offset from the monotonic clock to the realtime one to convert `profile`'s calls with.
    /// Each window measures it anew, with some ns of noise: a caller converted in a later window
    /// than its callee could start a few ns after it. So the offset kept is used while a window's
    /// differs from it by less than `offsetNoise`; a larger difference is the realtime clock set
    /// or slewed, and is followed.
    private func realtimeOffset(of profile: Profile) -> UInt64 {
        let measured = profile.realtimeStartNanoseconds &- profile.startNanoseconds
        return keptOffset.withLock { kept in
            if let offset = kept, min(measured &- offset, offset &- measured) < Self.offsetNoise { return offset }
            kept = measured
            return measured
        }
    }

    /// What the window reports and the status object call this pusher's figures.
    package var reportName: String { "otlp_push" }

    /// What is counted: requests (a window makes one of each signal).
    package var unit: String { "requests" }

    /// The thread that sends, retries and counts.
    package var control: any PushControl { thread }
}

/// One request waiting to be pushed; its body encoded at the first attempt. Touched only by the push thread.
private final class PendingExport: @unchecked Sendable {
    /// Which signal.
    enum Signal {
        case profiles
        case traces([Profile.Invocation], realtimeOffset: UInt64)

        /// The signal, without its data.
        var kind: OTLPSignal {
            switch self {
            case .profiles: .profiles
            case .traces: .traces
            }
        }
    }

    let signal: Signal
    let profile: Profile
    let session: UInt64
    private var body: [UInt8]?

    init(_ signal: Signal, _ profile: Profile, session: UInt64) {
        self.signal = signal
        self.profile = profile
        self.session = session
    }

    /// The POST of this request to its signal's URL, with its signal's headers, compression and
    /// timeout (at most `timeoutMilliseconds`, what the push thread allows).
    func request(settings: OTLPSettings, timeoutMilliseconds: Int) -> HTTPClientRequest {
        guard let destination = settings[signal.kind] else { preconditionFailure("a \(signal.kind) request was queued without its settings") }
        if body == nil {
            let encoded = switch signal {
            case .profiles: OTLPProfilesEncoder.request(profile, resource: settings.resource, session: session)
            case .traces(let calls, let offset):
                OTLPTracesEncoder.request(calls, of: profile, realtimeOffset: offset, resource: settings.resource, session: session)
            }
            body = destination.compression == .gzip ? Gzip.compress(encoded) : encoded
        }
        var headers = [(name: "Content-Type", value: "application/x-protobuf"), (name: "User-Agent", value: "stacksampler")]
        if destination.compression == .gzip { headers.append((name: "Content-Encoding", value: "gzip")) }
        let timeout = min(timeoutMilliseconds, Int(clamping: destination.timeout.wholeNanoseconds / 1_000_000))
        return HTTPClientRequest(method: .post, url: destination.url, headers: headers + destination.headers, body: body ?? [],
                                 connectTimeoutMilliseconds: min(timeout, 5000),
                                 totalTimeoutMilliseconds: timeout, maxResponseBytes: 1 << 20)
    }
}
