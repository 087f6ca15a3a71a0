import Foundation
import Testing

extension EndToEnd {
    /// Calls in a continuous session (`STACKSAMPLER_INVOCATIONS=1` with `STACKSAMPLER_CONTINUOUS`):
    /// each window's calls table checked against the calls `call_service` timed itself.
    @Suite struct ContinuousCalls {
        /// One call as the program timed it.
        struct TimedCall {
            var name: String
            var milliseconds: Double
            var endUnixNanoseconds: UInt64
            /// The thread that made it.
            var thread: Int
        }

        /// One window's calls table (`STACKSAMPLER_CALLS=…%t.json`).
        struct Window {
            var startUnixNanoseconds: UInt64
            var durationNanoseconds: UInt64
            /// Per function: whole calls, p50 and max in ms, the slowest calls (ms, end ns), and the
            /// calls cut by lost ticks (only counted).
            var functions: [String: (count: Int, p50: Double, max: Double, slowest: [(milliseconds: Double, end: UInt64)], cut: Int)]
            /// Names of the calls running at the window's end.
            var running: [String]

            init(json path: String) throws {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
                startUnixNanoseconds = try #require((object["start_unix_ns"] as? NSNumber)?.uint64Value)
                durationNanoseconds = try #require((object["duration_ns"] as? NSNumber)?.uint64Value)
                functions = [:]
                for function in try #require(object["functions"] as? [[String: Any]]) {
                    let slowest = (function["slowest"] as? [[String: Any]] ?? []).map { call in
                        let start = (call["start_unix_ns"] as? NSNumber)?.uint64Value ?? 0
                        let duration = (call["duration_ns"] as? NSNumber)?.uint64Value ?? 0
                        return (Double(duration) / 1e6, start + duration)
                    }
                    functions[function["name"] as? String ?? ""] = (
                        (function["count"] as? NSNumber)?.intValue ?? 0, Double((function["p50_ns"] as? NSNumber)?.uint64Value ?? 0) / 1e6,
                        Double((function["max_ns"] as? NSNumber)?.uint64Value ?? 0) / 1e6, slowest, (function["cut"] as? NSNumber)?.intValue ?? 0)
                }
                running = (object["running"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            }
        }

        static let timedFunctions = ["handle_request", "query_database", "render_page"]

        /// The `call NAME MS END_UNIX_NS TID` lines of the program's output.
        static func timedCalls(_ output: String) -> [TimedCall] {
            output.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count == 5, fields[0] == "call", let milliseconds = Double(fields[2]), let end = UInt64(fields[3]),
                      let thread = Int(fields[4]) else { return nil }
                return TimedCall(name: String(fields[1]), milliseconds: milliseconds, endUnixNanoseconds: end, thread: thread)
            }
        }

        /// The nearest-rank median.
        static func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[(sorted.count + 1) / 2 - 1]
        }

        /// Runs `call_service` for `seconds` in 1 s windows in wall mode at `period` (ms), with
        /// calls tables and stall reports (threshold 1 s) written; its timed calls, windows and stall reports.
        static func run(periodMilliseconds period: Int, seconds: Int, label: String) throws -> (calls: [TimedCall], windows: [Window], stalls: String) {
            let directory = try ScratchDirectory.make(label)
            let run = try ChildProcess.run(try TestProgram.callService.executable(), [String(seconds), "1600"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "1s", "STACKSAMPLER_MODE": "wall",
                "STACKSAMPLER_PERIOD": "\(period)ms", "STACKSAMPLER_INVOCATIONS": "1", "STACKSAMPLER_CALLS": directory + "/calls-%t.json",
                "STACKSAMPLER_STALL_THRESHOLD": "1s", "STACKSAMPLER_STALLS": directory + "/stalls.txt",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let windows = try ContinuousMode.windowFiles(in: directory, prefix: "calls-", suffix: ".json").map(Window.init(json:))
            let stalls = (try? String(contentsOfFile: directory + "/stalls.txt", encoding: .utf8)) ?? ""
            return (timedCalls(run.stdout), windows, stalls)
        }

        @Test("each window's calls of each timed function: count, p50 and max as the service measured them; the slowest are its slowest",
              arguments: [10, 1])
        func windowsMatchTheProgram(periodMilliseconds period: Int) throws {
            let (calls, windows, _) = try Self.run(periodMilliseconds: period, seconds: 10, label: "calls-\(period)ms")
            #expect(windows.count >= 9, "\(windows.count) windows of calls in 10 s of 1 s windows")
            let periodMs = Double(period)
            // A call ending this close to a window's edge may be counted on either side: its end
            // is known to a period or two (and the clocks are read apart by well under a ms).
            let margin = UInt64((3 * periodMs + 2) * 1e6)
            func tolerance(_ value: Double) -> Double { max(0.1 * value, 2 * periodMs) }
            // The first window is left out: its first samples make the sampler thread read the
            // symbol tables it finds function starts in, and ticks that come late meanwhile can
            // merge or split calls (said in the report of this change; the windows after it hold).
            for (index, window) in windows.enumerated().dropFirst() {
                let start = window.startUnixNanoseconds, end = start + window.durationNanoseconds
                for name in Self.timedFunctions {
                    let inside = calls.filter { $0.name == name && $0.endUnixNanoseconds >= start + margin && $0.endUnixNanoseconds + margin <= end }
                    let edge = calls.filter { $0.name == name && $0.endUnixNanoseconds + margin > start && $0.endUnixNanoseconds < start + margin
                        || $0.name == name && $0.endUnixNanoseconds + margin > end && $0.endUnixNanoseconds < end + margin }
                    let seen = window.functions[name]
                    let count = seen?.count ?? 0
                    // Calls cut by lost ticks are only counted: a call cut in two is two cut calls.
                    let cut = seen?.cut ?? 0
                    let context = "window \(index + 1) at \(period) ms, \(name): the profile has \(count) calls (\(cut) more cut), p50 \(seen?.p50 ?? 0) ms, max \(seen?.max ?? 0) ms; "
                        + "the program \(inside.count) calls inside and \(edge.count) at an edge, p50 \(Self.median(inside.map(\.milliseconds))) ms, "
                        + "max \(inside.map(\.milliseconds).max() ?? 0) ms"
                    // Within 10 % of the calls that surely ended in the window, or within the calls at its edges.
                    let countBand = max(0.1 * Double(inside.count), Double(edge.count))
                    #expect(Double(count) >= Double(inside.count - cut) - countBand && Double(count) <= Double(inside.count + edge.count) + countBand, "\(context)")
                    guard let seen, count > 0, !inside.isEmpty else { continue }
                    print("calls: \(period) ms, window \(index + 1), \(name): \(count) calls (\(cut) cut) for \(inside.count) (+\(edge.count) at an edge), "
                          + "p50 \(seen.p50) ms for \(Self.median(inside.map(\.milliseconds))), max \(seen.max) ms for \(inside.map(\.milliseconds).max()!)")
                    // The profile's whole calls are the inside ones and some of the edge ones, less
                    // at most `cut` of them: its median (rank r of its count) is at least the r-th
                    // of them all, and at most the (r + cut)-th of the inside ones (or the largest of
                    // all, past them); its maximum at least the (cut + 1)-th largest inside.
                    let both = (inside + edge).map(\.milliseconds)
                    let all = both.sorted(), insideSorted = inside.map(\.milliseconds).sorted()
                    let rank = min(max(1, (count + 1) / 2), all.count)
                    let lowest = all[rank - 1], highest = rank + cut <= insideSorted.count ? insideSorted[rank + cut - 1] : all.last!
                    #expect(seen.p50 >= lowest - tolerance(lowest) && seen.p50 <= highest + tolerance(highest), "\(context)")
                    let maxima = [insideSorted[max(0, insideSorted.count - 1 - cut)], both.max()!]
                    #expect(seen.max >= maxima.min()! - tolerance(maxima.min()!) && seen.max <= maxima.max()! + tolerance(maxima.max()!), "\(context)")
                    // Each of the 5 slowest listed is one of the program's calls (ending at its end, as long), and no call of the program
                    // longer than the slowest listed is missing from the list (up to K = 20 listed).
                    for call in seen.slowest.prefix(5) {
                        let match = calls.first { $0.name == name && abs(Double($0.endUnixNanoseconds) - Double(call.end)) <= 3e6 * periodMs + 2e6
                            && abs($0.milliseconds - call.milliseconds) <= tolerance($0.milliseconds) }
                        let nearest = calls.filter { $0.name == name }.min { abs(Double($0.endUnixNanoseconds) - Double(call.end)) < abs(Double($1.endUnixNanoseconds) - Double(call.end)) }
                        let offset = nearest.map { String((Double($0.endUnixNanoseconds) - Double(call.end)) / 1e6) } ?? "-"
                        #expect(match != nil, "\(context): listed slow call of \(call.milliseconds) ms ending at \(call.end) is none of the program's; the nearest ended \(offset) ms from it and lasted \(nearest?.milliseconds ?? 0) ms")
                    }
                    if seen.slowest.count == 20, let shortestListed = seen.slowest.last?.milliseconds {
                        let missed = inside.filter { $0.milliseconds > shortestListed + tolerance($0.milliseconds) }.count
                        #expect(missed <= 20 + cut, "\(context)")
                    }
                }
            }
        }

        @Test("a call spanning two windows is reported once, whole, in the window where it ends, and running in the one before; stall reports for it and none for calls under the threshold")
        func spanningCallAndStalls() throws {
            let (calls, windows, stalls) = try Self.run(periodMilliseconds: 10, seconds: 6, label: "calls-spanning")
            let truth = try #require(calls.first { $0.name == "long_call" }, "the program made no long_call")
            let reported = windows.compactMap { window in window.functions["long_call"].map { (window, $0) } }
            #expect(reported.count == 1 && reported.first?.1.count == 1, "long_call reported \(reported.map(\.1.count)) times in \(reported.count) windows")
            if let (window, seen) = reported.first {
                #expect(abs(seen.max - truth.milliseconds) <= max(0.1 * truth.milliseconds, 20), "long_call: \(seen.max) ms, the program measured \(truth.milliseconds) ms")
                #expect(truth.endUnixNanoseconds + 40_000_000 >= window.startUnixNanoseconds
                        && truth.endUnixNanoseconds <= window.startUnixNanoseconds + window.durationNanoseconds + 40_000_000,
                        "long_call ended at \(truth.endUnixNanoseconds), reported in the window from \(window.startUnixNanoseconds)")
                let before = windows.last { $0.startUnixNanoseconds < window.startUnixNanoseconds }
                #expect(before?.running.contains("long_call") == true, "long_call not listed running in the window before its end: \(before?.running ?? [])")
            }
            // Each report marks with `>` the frames that have run past the threshold.
            let overThreshold = stalls.split(separator: "\n").filter { $0.hasPrefix("stacksampler: >") }.map { String($0.split(separator: " ").last ?? "") }
            #expect(overThreshold.contains("long_call"), "no stall report for long_call (1.6 s, threshold 1 s):\n\(stalls)")
            // A call the program itself measured under 0.9 s (well under the threshold, by more than the
            // 2 periods a duration may be off) is never reported.
            for name in Self.timedFunctions where calls.filter({ $0.name == name }).allSatisfy({ $0.milliseconds < 900 }) {
                #expect(!overThreshold.contains(name), "\(name) (every call under 0.9 s) reported as a stall:\n\(stalls)")
            }
            #expect(!overThreshold.contains("wait_for_request"), "wait_for_request (25 ms) reported as a stall:\n\(stalls)")
        }
    }
}

extension EndToEnd.ContinuousCalls {
    @Test("the calls, invocations and stalls endpoints and top --calls on a running service")
    func endpointsAndTop() throws {
        let directory = try ScratchDirectory.make("calls-endpoints")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try TestProgram.callService.executable())
        process.arguments = ["12", "1600"]
        var environment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
        environment.merge(["LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "1s", "STACKSAMPLER_MODE": "wall",
                           "STACKSAMPLER_INVOCATIONS": "1", "STACKSAMPLER_STALL_THRESHOLD": "1s"]) { $1 }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.waitUntilExit() }
        let socket = "/tmp/stacksampler-\(getuid())/\(process.processIdentifier).sock"
        let started = Date()
        while !FileManager.default.fileExists(atPath: socket) {
            guard process.isRunning, Date().timeIntervalSince(started) < 10 else { throw HarnessError("the service never listened") }
            usleep(20_000)
        }
        func get(_ path: String, _ options: [String] = []) throws -> (status: Int, body: String) {
            let result = try ChildProcess.run("curl", ["-sS", "--max-time", "30", "--unix-socket", socket, "-w", "\n%{http_code}"] + options
                                              + ["http://localhost" + path], in: directory, timeout: .seconds(40))
            var lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            let status = Int(lines.popLast() ?? "") ?? 0
            return (status, lines.joined(separator: "\n"))
        }
        let json = try get("/debug/stacksampler/calls?seconds=2&format=json")
        #expect(json.status == 200 && json.body.contains("\"name\":\"handle_request\"") && json.body.contains("\"p99_ns\""), "\(json)")
        let accepted = try get("/debug/stacksampler/calls?seconds=1&function=query_*", ["-H", "Accept: application/json"])
        #expect(accepted.status == 200 && accepted.body.hasPrefix("{") && accepted.body.contains("query_database")
                && !accepted.body.contains("\"name\":\"render_page\""), "\(accepted)")
        let text = try get("/debug/stacksampler/calls?seconds=1")
        #expect(text.status == 200 && text.body.hasPrefix("calls that ended in") && text.body.contains("handle_request"), "\(text)")
        let trace = try get("/debug/stacksampler/invocations?seconds=1&format=chrome")
        #expect(trace.status == 200 && trace.body.contains("traceEvents") && trace.body.contains("render_page"), "\(trace.body.prefix(300))")
        let otlp = try get("/debug/stacksampler/invocations?seconds=1&format=otlp")
        #expect(otlp.status == 400 && otlp.body.contains("chrome"), "\(otlp)")
        let top = try ChildProcess.run(try BuildProducts.cli(), ["top", String(process.processIdentifier), "--calls", "--iterations", "1"],
                                       in: directory, timeout: .seconds(30))
        #expect(top.termination == .exited(0) && top.stdout.contains("p99") && top.stdout.contains("handle_request"), "\(top)")
        // long_call starts 2.3 s in and passes the 1 s threshold at 3.3 s: reported by 6 s.
        while Date().timeIntervalSince(started) < 6 { usleep(100_000) }
        let stalls = try get("/debug/stacksampler/stalls")
        #expect(stalls.status == 200 && stalls.body.contains("long_call"), "\(stalls)")
    }
}
