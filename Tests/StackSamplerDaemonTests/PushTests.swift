import Foundation
import Testing
@testable import StackSampler
@testable import StackSamplerDaemon
import TestSupport

/// A window to push: what it holds does not matter to the pusher, which sends its pprof.
func pushedWindow() throws -> Profile {
    try Profile(collapsedStacks: "[main tid=100];main;parse 5\n[main tid=100];main;find 2\n[worker tid=101];main;parse 3\n", command: "app")
}

/// The `/ingest` request: name, query and its encoding, headers, body.
@Suite struct PyroscopeIngestTests {
    @Test("an app name with labels parses, and prints back in Pyroscope's form")
    func namesWithLabelsParseAndPrintBack() throws {
        let name = try PyroscopeAppName(parsing: "svc{env=prod,region=eu}")
        #expect(name.service == "svc")
        #expect(name.labels.map(\.name) == ["env", "region"])
        #expect(name.labels.map(\.value) == ["prod", "eu"])
        #expect(name.description == "svc{env=prod,region=eu}")
        #expect(try PyroscopeAppName(parsing: "my-app/api.v2").description == "my-app/api.v2{}")
        #expect(try PyroscopeAppName(parsing: " svc { env = prod } ").description == "svc{env=prod}")
    }

    @Test("a name Pyroscope would refuse is refused", arguments: ["", "{env=prod}", "svc{env=prod", "my app", "svc{env}", "svc{__name__=x}", "svc{bad-key=1}", "svc{a=b{c}}"])
    func namesPyroscopeWouldRefuseAreRefused(text: String) {
        #expect(throws: PushError.self) { try PyroscopeAppName(parsing: text) }
    }

    @Test("a process name becomes an acceptable service name")
    func processNamesAreMadeAcceptable() {
        #expect(PyroscopeAppName.sanitizedService("my prog:1") == "my_prog_1")
        #expect(PyroscopeAppName.sanitizedService("") == "unknown")
    }

    @Test("the /ingest query has the documented parameters, every value percent-encoded")
    func queryFollowsTheDocumentedParametersAndEncodesEveryValue() throws {
        let name = try PyroscopeAppName(parsing: "svc{env=prod,region=eu west}")
        let query = PyroscopeIngest.query(name: name, realtimeStartNanoseconds: 1_700_000_000_250_000_000,
                                          durationNanoseconds: 1_000_000_000, period: .milliseconds(10))
        #expect(query == "name=svc%7Benv%3Dprod%2Cregion%3Deu%20west%7D&from=1700000000&until=1700000002&format=pprof&sampleRate=100&spyName=stacksampler")
    }

    @Test("a short window still spans a second; an odd period's rate rounds; no period, no rate")
    func shortWindowsStillSpanASecondAndOddPeriodsRound() {
        let name = PyroscopeAppName(service: "a")
        let query = PyroscopeIngest.query(name: name, realtimeStartNanoseconds: 5_000_000_000, durationNanoseconds: 100_000_000,
                                          period: .microseconds(3000))
        #expect(query == "name=a%7B%7D&from=5&until=6&format=pprof&sampleRate=333&spyName=stacksampler")
        let slow = PyroscopeIngest.query(name: name, realtimeStartNanoseconds: 5_000_000_000, durationNanoseconds: 0, period: .seconds(2))
        #expect(slow.contains("sampleRate=1&"))
        let unknown = PyroscopeIngest.query(name: name, realtimeStartNanoseconds: 0, durationNanoseconds: 0, period: nil)
        #expect(!unknown.contains("sampleRate"))
    }

    @Test("percent-encoding keeps only unreserved characters")
    func percentEncodingKeepsOnlyUnreservedCharacters() {
        #expect(PyroscopeIngest.percentEncoded("aZ09-._~") == "aZ09-._~")
        #expect(PyroscopeIngest.percentEncoded("a b&c=d/é") == "a%20b%26c%3Dd%2F%C3%A9")
    }

    @Test("the request carries the pprof as its body, with the tenant and authorization headers")
    func requestCarriesThePprofAsItsBodyWithTenantAndAuth() throws {
        let profile = try pushedWindow()
        let pprof = profile.rendered(as: .pprof)
        let request = PyroscopeIngest.request(base: "https://profiles.example.com/", name: PyroscopeAppName(service: "svc"),
                                              profile: profile, pprof: pprof,
                                              headers: [("X-Scope-OrgID", "team-a"), ("Authorization", "Bearer t0k")],
                                              timeoutMilliseconds: 7000)
        #expect(request.method == .post)
        #expect(request.url.hasPrefix("https://profiles.example.com/ingest?name=svc%7B%7D&from="))
        #expect(request.body == pprof)
        #expect(request.header("content-type") == "application/octet-stream")
        #expect(request.header("X-Scope-OrgID") == "team-a")
        #expect(request.header("Authorization") == "Bearer t0k")
        #expect(request.totalTimeoutMilliseconds == 7000)
    }

    @Test("Base64 as RFC 4648; credentials, given or read from a file, become Basic or Bearer authorization")
    func base64AndCredentials() throws {
        #expect(Base64.encoded(Array("".utf8)) == "")
        #expect(Base64.encoded(Array("f".utf8)) == "Zg==")
        #expect(Base64.encoded(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encoded(Array("foo".utf8)) == "Zm9v")
        #expect(Base64.encoded(Array("user:pa:ss".utf8)) == "dXNlcjpwYTpzcw==")
        #expect(try PushCredentials.basic(user: "user", password: "pa:ss").authorizationHeader() == "Basic dXNlcjpwYTpzcw==")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("creds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("token").path
        try "  secret-token\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try PushCredentials.file(file).authorizationHeader() == "Bearer secret-token")
        try "user:pa:ss\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try PushCredentials.file(file).authorizationHeader() == "Basic dXNlcjpwYTpzcw==")
        #expect(throws: PushError.self) { try PushCredentials.file(directory.appendingPathComponent("missing").path).authorizationHeader() }
    }
}

/// `PushSettings` from the settings table's variables.
@Suite struct PushSettingsTests {
    private func read(_ table: [String: String]) throws(PushError) -> PushSettings? {
        try PushSettings.read { table[$0] }
    }

    @Test("no push without a URL")
    func noPushWithoutAURL() throws {
        #expect(try read([:]) == nil)
        #expect(try read(["STACKSAMPLER_APP_NAME": "svc"]) == nil)
    }

    @Test("every push setting is read from the environment")
    func everySettingIsRead() throws {
        let settings = try #require(try read([
            "STACKSAMPLER_PUSH": "https://p.example", "STACKSAMPLER_APP_NAME": "svc{env=prod}",
            "STACKSAMPLER_PUSH_TENANT": "t1", "STACKSAMPLER_PUSH_BASIC_AUTH": "u:p", "STACKSAMPLER_PUSH_QUEUE": "3",
        ]))
        #expect(settings.url == "https://p.example")
        #expect(settings.appName?.description == "svc{env=prod}")
        #expect(settings.tenant == "t1")
        #expect(settings.credentials == .basic(user: "u", password: "p"))
        #expect(settings.queueLength == 3)
        #expect(try read(["STACKSAMPLER_PUSH": "http://h", "STACKSAMPLER_PUSH_TOKEN": "abc"])?.credentials == .bearer("abc"))
        #expect(try read(["STACKSAMPLER_PUSH": "http://h", "STACKSAMPLER_PUSH_CREDENTIALS_FILE": "/c"])?.credentials == .file("/c"))
        #expect(try read(["STACKSAMPLER_PUSH": "http://h"])?.queueLength == 8)
    }

    @Test("a bad value is refused naming the variable and what to give")
    func badValuesSayWhichVariableAndWhatToGive() {
        func message(_ table: [String: String]) -> String {
            do { _ = try read(table); return "" } catch { return error.description }
        }
        #expect(message(["STACKSAMPLER_PUSH": "ftp://x"]).contains("STACKSAMPLER_PUSH=ftp://x"))
        #expect(message(["STACKSAMPLER_PUSH": "http://h", "STACKSAMPLER_APP_NAME": "a b"]).contains("STACKSAMPLER_APP_NAME=a b"))
        #expect(message(["STACKSAMPLER_PUSH": "http://h", "STACKSAMPLER_PUSH_QUEUE": "0"]).contains("STACKSAMPLER_PUSH_QUEUE=0"))
        #expect(message(["STACKSAMPLER_PUSH": "http://h", "STACKSAMPLER_PUSH_TOKEN": "a", "STACKSAMPLER_PUSH_BASIC_AUTH": "u:p"])
            .contains("one way only"))
    }
}

/// The queue and retry schedule on a fake clock.
@Suite struct PushScheduleTests {
    let policy = PushPolicy(initialBackoff: .milliseconds(500), maxBackoff: .seconds(30), maxAttempts: 4)

    @Test("the backoff doubles up to its cap")
    func backoffDoublesToItsCap() {
        let waits = (1...9).map { policy.backoffNanoseconds(afterFailures: $0) / 1_000_000 }
        #expect(waits == [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
    }

    @Test("a full queue drops the oldest window")
    func aFullQueueDropsTheOldestWindow() {
        var schedule = PushSchedule<Int>(capacity: 3, policy: policy)
        for window in 1...5 { schedule.enqueue(window) }
        #expect(schedule.waiting.map(\.payload) == [3, 4, 5])
        #expect(schedule.counters.droppedQueueFull == 2)
    }

    @Test("a failed window waits its backoff, then is given up after the attempts")
    func failedWindowsWaitTheirBackoffThenGiveUp() {
        var schedule = PushSchedule<Int>(capacity: 8, policy: policy)
        schedule.enqueue(1)
        schedule.enqueue(2)
        var now: UInt64 = 1_000
        var waits: [UInt64] = []
        // Window 1 fails every attempt: retried after 0.5, 1 and 2 s, then dropped.
        loop: while true {
            switch schedule.next(now: now) {
            case .send(let pending) where pending.payload == 1:
                schedule.finish(pending, .failed("connection refused"), now: now)
            case .send(let pending):
                #expect(pending.payload == 2)
                schedule.finish(pending, .pushed, now: now)
            case .wait(let until):
                waits.append(until - now)
                now = until
            case .idle:
                break loop
            }
        }
        #expect(waits == [500_000_000, 1_000_000_000, 2_000_000_000])
        #expect(schedule.counters == {
            var counters = PushCounters()
            counters.pushed = 1
            counters.retried = 3
            counters.droppedGaveUp = 1
            return counters
        }())
    }

    @Test("a window in backoff is the oldest and the first dropped when the queue fills")
    func aWindowInBackoffIsTheOldestAndGoesFirstWhenTheQueueFills() {
        var schedule = PushSchedule<Int>(capacity: 2, policy: policy)
        schedule.enqueue(1)
        guard case .send(let first) = schedule.next(now: 0) else { Issue.record("nothing to send"); return }
        schedule.enqueue(2)
        schedule.enqueue(3)
        schedule.finish(first, .failed("timeout"), now: 0)
        #expect(schedule.waiting.map(\.payload) == [2, 3])
        #expect(schedule.counters.droppedQueueFull == 1)
        #expect(schedule.counters.retried == 1)
    }

    @Test("a refusal is not retried; stop counts what is left")
    func refusalsAreNotRetriedAndStopCountsTheRest() {
        var schedule = PushSchedule<Int>(capacity: 8, policy: policy)
        for window in 1...3 { schedule.enqueue(window) }
        guard case .send(let first) = schedule.next(now: 0) else { Issue.record("nothing to send"); return }
        schedule.finish(first, .rejected("HTTP 400"), now: 0)
        schedule.abandon(inFlight: 1)
        #expect(schedule.counters.droppedRejected == 1)
        #expect(schedule.counters.droppedAtStop == 3)
        #expect(schedule.counters.dropped == 4)
    }

    @Test("HTTP statuses and transfer failures are classified as pushed, refused or retried")
    func statusesAreClassified() {
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 200))) == .pushed)
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 204))) == .pushed)
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 429, body: Array("slow down\n".utf8)))) == .failed("HTTP 429: slow down"))
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 503))) == .failed("HTTP 503"))
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 408))) == .failed("HTTP 408"))
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 400, body: Array("bad name".utf8)))) == .rejected("HTTP 400: bad name"))
        #expect(PushOutcome.of(.success(HTTPClientResponse(status: 401))) == .rejected("HTTP 401"))
        #expect(PushOutcome.of(.failure(.transferFailed(url: "u", reason: "refused"))) == .failed("u: refused"))
    }
}

/// The pusher's thread with a fake transport and millisecond backoffs: outcomes are counted the
/// same whatever the timing.
@Suite struct PyroscopePusherTests {
    let quick = PushPolicy(initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(4), maxAttempts: 3, requestTimeout: .seconds(5))

    @Test("every window is pushed with the settings' headers")
    func pushesEveryWindowWithTheSettingsHeaders() throws {
        let transport = ScriptedTransport([])
        let settings = PushSettings(url: "http://back.end", appName: try PyroscopeAppName(parsing: "svc{env=test}"),
                                    tenant: "tenant-1", credentials: .bearer("tok"))
        let pusher = try PyroscopePusher(settings: settings, policy: quick, transport: transport, processName: "ignored")
        for _ in 0..<3 { pusher.push(try pushedWindow()) }
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.pushed == 3 && counters.dropped == 0 && counters.retried == 0)
        let request = try #require(transport.requests.first)
        #expect(request.url.hasPrefix("http://back.end/ingest?name=svc%7Benv%3Dtest%7D&"))
        #expect(request.header("X-Scope-OrgID") == "tenant-1")
        #expect(request.header("Authorization") == "Bearer tok")
        #expect(try pushedWindow().rendered(as: .pprof) == request.body)
    }

    @Test("failures are retried, and given up after the attempts")
    func retriesFailuresAndGivesUpAfterTheAttempts() throws {
        let refused: Result<HTTPClientResponse, HTTPClientError> = .failure(.transferFailed(url: "u", reason: "refused"))
        // Window 1: fails, fails, succeeds. Window 2: fails three times (given up). Window 3: 503 then 200.
        let transport = ScriptedTransport([refused, refused, .success(HTTPClientResponse(status: 200)),
                                           refused, .success(HTTPClientResponse(status: 500)), refused,
                                           .success(HTTPClientResponse(status: 503)), .success(HTTPClientResponse(status: 200))])
        let pusher = try PyroscopePusher(settings: PushSettings(url: "http://h"), policy: quick, transport: transport, processName: "app")
        for _ in 0..<3 { pusher.push(try pushedWindow()) }
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.pushed == 2)
        #expect(counters.retried == 5)
        #expect(counters.droppedGaveUp == 1)
        #expect(counters.dropped == 1)
        #expect(transport.requests.count == 8)
        #expect(transport.requests[0].url.contains("name=app%7B%7D"))
    }

    @Test("a refusal is not retried")
    func aRefusalIsNotRetried() throws {
        let transport = ScriptedTransport([.success(HTTPClientResponse(status: 400, body: Array("invalid service name".utf8)))])
        let pusher = try PyroscopePusher(settings: PushSettings(url: "http://h"), policy: quick, transport: transport, processName: "app")
        pusher.push(try pushedWindow())
        pusher.push(try pushedWindow())
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.droppedRejected == 1 && counters.pushed == 1 && counters.retried == 0)
        #expect(pusher.lastError == "HTTP 400: invalid service name")
    }

    @Test("a slow back end never blocks push; the queue drops the oldest")
    func aSlowBackEndNeverBlocksPushAndTheQueueDropsTheOldest() throws {
        let transport = ScriptedTransport([])
        transport.hold()
        let pusher = try PyroscopePusher(settings: PushSettings(url: "http://h", queueLength: 2), policy: quick,
                                         transport: transport, processName: "app")
        pusher.push(try pushedWindow())
        #expect(transport.waitForRequests(1))
        // The first is on its way and held; five more arrive: two wait, three are dropped.
        for _ in 0..<5 { pusher.push(try pushedWindow()) }
        #expect(pusher.counters.droppedQueueFull == 3)
        #expect(pusher.pending == 3)
        transport.release()
        let counters = pusher.stop(deadline: .seconds(10))
        #expect(counters.pushed == 3 && counters.droppedQueueFull == 3 && counters.dropped == 3)
    }

    @Test("stop gives up at its deadline")
    func stopGivesUpAtItsDeadline() throws {
        let transport = ScriptedTransport([])
        transport.hold()
        let pusher = try PyroscopePusher(settings: PushSettings(url: "http://h"), policy: quick, transport: transport, processName: "app")
        for _ in 0..<3 { pusher.push(try pushedWindow()) }
        #expect(transport.waitForRequests(1))
        // The fake transport ignores the cancellation: stop returns after its deadline and grace anyway.
        let counters = pusher.stop(deadline: .milliseconds(50))
        #expect(counters.droppedAtStop == 3 && counters.pushed == 0)
        pusher.push(try pushedWindow())
        #expect(pusher.counters.droppedAtStop == 4)
        transport.release()
    }
}

/// Several push threads stopped at a session's end.
@Suite struct PushStopTests {
    @Test("pushers stop together: two stuck on a request that ignores its cancellation take one grace after the deadline, not one each")
    func pushersStopTogether() throws {
        let quick = PushPolicy(initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(4), maxAttempts: 3, requestTimeout: .seconds(5))
        let transports = [ScriptedTransport([]), ScriptedTransport([])]
        for transport in transports { transport.hold() }
        defer { for transport in transports { transport.release() } }
        let pushers: [any WindowPusher] = [
            try PyroscopePusher(settings: PushSettings(url: "http://h"), policy: quick, transport: transports[0], processName: "app"),
            try OTLPPusher(settings: OTLPSettings(traces: nil, profiles: OTLPSignalSettings(url: "http://c/v1development/profiles"),
                                                  resource: OTLPResource()), policy: quick, transport: transports[1]),
        ]
        for pusher in pushers { pusher.push(try pushedWindow()) }
        for transport in transports { #expect(transport.waitForRequests(1)) }
        let deadline = Duration.milliseconds(200), clock = ContinuousClock(), start = clock.now
        let counters = PushStop.all(pushers.map(\.control), deadline: deadline)
        let elapsed = clock.now - start
        #expect(counters.map(\.droppedAtStop) == [1, 1])
        // One after the other, each with its own grace, they took at least the deadline and two graces.
        #expect(elapsed >= PushStop.grace && elapsed < deadline + PushStop.grace * 1.8, "stopping two pushers took \(elapsed)")
    }
}

/// The pusher against a receiver in this process over real HTTP (libcurl), with windows profiled
/// here (one session at a time in the test process: `.profilerSession`).
@Suite(.serialized, .profilerSession) struct PushReceiver {
    @Test("every window of a real session reaches a receiver as Pyroscope documents /ingest")
    func everyWindowReachesTheReceiverAsPyroscopeDocumentsIt() throws {
        let receiver = IngestReceiver()
        try receiver.start()
        defer { receiver.stop() }
        try Profiler.start(period: .milliseconds(5), mode: .cpu)
        _ = burnInProfilerAPITest(seconds: 0.3)
        let profile = try Profiler.stop()
        let settings = PushSettings(url: receiver.url, appName: try PyroscopeAppName(parsing: "svc{env=prod,region=eu}"), tenant: "team-a",
                                    credentials: .basic(user: "u", password: "p"))
        let pusher = try PyroscopePusher(settings: settings, transport: HTTPClient(), processName: "tests")
        pusher.push(profile)
        pusher.push(profile)
        let counters = pusher.stop(deadline: .seconds(20))
        #expect(counters.pushed == 2 && counters.dropped == 0)
        #expect(receiver.requests.count == 2)
        for request in receiver.requests {
            #expect(IngestReceiver.problems(request) == [])
            #expect(request.query["name"] == "svc{env=prod,region=eu}")
            #expect(request.query["sampleRate"] == "200")
            #expect(request.query["spyName"] == "stacksampler")
            #expect(request.headers["x-scope-orgid"] == "team-a")
            #expect(request.headers["authorization"] == "Basic dTpw")
            let from = try #require(Int(request.query["from"] ?? ""))
            #expect(UInt64(from) == profile.realtimeStartNanoseconds / 1_000_000_000)
        }
        let body = try #require(receiver.requests.first?.body)
        guard let top = try goPprofTop(body) else {
            try Test.cancel("go is not installed (apt-get install golang-go): the pushed body was not read by go tool pprof")
        }
        #expect(top.contains("burnInProfilerAPITest"), "go tool pprof -top:\n\(top)")
    }

    @Test("a receiver down for a while loses only what the queue drops")
    func aReceiverDownForAWhileLosesOnlyWhatTheQueueDrops() throws {
        let receiver = IngestReceiver()
        try receiver.start()
        defer { receiver.stop() }
        receiver.stop()
        var profile = try pushedWindow()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        profile.realtimeStartNanoseconds = UInt64(now.tv_sec) * 1_000_000_000
        let policy = PushPolicy(initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(100), maxAttempts: 1000,
                                requestTimeout: .seconds(5))
        let pusher = try PyroscopePusher(settings: PushSettings(url: receiver.url, queueLength: 4), policy: policy,
                                         transport: HTTPClient(), processName: "tests")
        // Ten windows while the receiver is down: the queue keeps four (plus the one being retried
        // at most), the rest are dropped and counted.
        for _ in 0..<10 { pusher.push(profile) }
        while pusher.counters.retried < 3 { usleep(10_000) }
        let whileDown = pusher.counters
        #expect(whileDown.pushed == 0)
        try receiver.start()
        let counters = pusher.stop(deadline: .seconds(30))
        #expect(counters.dropped == counters.droppedQueueFull)
        #expect(counters.pushed + counters.droppedQueueFull == 10)
        #expect(counters.pushed == 4 || counters.pushed == 5)
        #expect(receiver.requests.count == counters.pushed)
        #expect(receiver.requests.allSatisfy { IngestReceiver.problems($0) == [] })
    }

    @Test("continuous windows of this process are all pushed through an outage")
    func continuousWindowsOfThisProcessArePushedThroughAnOutage() throws {
        let receiver = IngestReceiver()
        try receiver.start()
        defer { receiver.stop() }
        let policy = PushPolicy(initialBackoff: .milliseconds(20), maxBackoff: .milliseconds(100), maxAttempts: 1000,
                                requestTimeout: .seconds(5))
        let pusher = try PyroscopePusher(settings: PushSettings(url: receiver.url, appName: PyroscopeAppName(service: "tests")),
                                         policy: policy, transport: HTTPClient(), processName: "tests")
        let windows = WindowCount()
        try Profiler.startContinuous(ProfilerConfiguration(period: .milliseconds(5)), window: .milliseconds(200)) { profile in
            windows.add()
            pusher.push(profile)
        }
        // Counted in windows, not in time (a loaded machine stretches the CPU burns): down
        // while three windows arrive (the queue holds eight), so none may be lost.
        func work(until count: Int) { while windows.count < count { _ = burnInProfilerAPITest(seconds: 0.01) } }
        work(until: 2)
        receiver.stop()
        work(until: windows.count + 3)
        try receiver.start()
        work(until: windows.count + 2)
        _ = try Profiler.stop()
        let counters = pusher.stop(deadline: .seconds(20))
        #expect(windows.count >= 5)
        #expect(counters.dropped == 0, "\(counters)")
        #expect(counters.pushed == windows.count, "\(counters), \(windows.count) windows")
        #expect(counters.retried > 0, "\(counters)")
        #expect(receiver.requests.count == windows.count)
        #expect(receiver.requests.allSatisfy { IngestReceiver.problems($0) == [] })
        // Consecutive windows: each one's from is at or after the one before.
        let starts = receiver.requests.compactMap { Int($0.query["from"] ?? "") }
        #expect(starts == starts.sorted())
    }

    @Test("nothing listening: a transfer failure naming the URL and the connection")
    func aClearErrorWhenNothingListens() throws {
        let receiver = IngestReceiver()
        try receiver.start()
        receiver.stop()
        let result = HTTPClient().send(HTTPClientRequest(url: receiver.url + "/x", connectTimeoutMilliseconds: 2000))
        guard case .failure(.transferFailed(let url, let reason)) = result else { Issue.record("\(result)"); return }
        #expect(url == receiver.url + "/x")
        #expect(reason.lowercased().contains("connect"), "\(reason)")
    }
}

/// Windows delivered so far.
final class WindowCount: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}
