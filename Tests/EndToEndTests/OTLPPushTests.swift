import Foundation
import Testing

extension EndToEnd {
    /// Pushes over OTLP/HTTP from a profiled child process to a stand-in collector
    /// (Tests/Programs/otlp_collector.py), which decodes every request with the official
    /// OpenTelemetry protobuf definitions.
    @Suite struct OTLPPush {
        /// A scratch directory named `name` and a collector listening, whose decoded requests land in `received`.
        static func startCollector(_ name: String) throws -> (directory: String, received: String, collector: Process, port: UInt16) {
            let directory = try ScratchDirectory.make(name)
            let received = directory + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let (collector, port) = try ContinuousPush.startReceiver(in: received, script: "otlp_collector.py")
            return (directory, received, collector, port)
        }

        /// The decoded requests, in the order they arrived.
        static func requests(in directory: String) throws -> [[String: Any]] {
            try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
                .compactMap { Int($0.dropLast(5)) }.sorted().map { number in
                    let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(number).json"))
                    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                }
        }

        @Test("every window reaches the collector as an OTLP profile, gzipped as asked, whose samples, stacks and totals are the window's pprof",
              .enabled(if: GoPprof.executable != nil, GoPprof.skipReason))
        func windowsArePushedAsOTLPProfiles() throws {
            let (directory, received, collector, port) = try Self.startCollector("otlp-push")
            defer { collector.terminate() }
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["2.2", "2"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "500ms",
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)/", "OTEL_SERVICE_NAME": "shop",
                "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=test%2Ce2e,service.name=not-this-one",
                "OTEL_EXPORTER_OTLP_HEADERS": "api-key=k%3D1", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
                "STACKSAMPLER_OUTPUT": directory + "/w-%t.pprof", "STACKSAMPLER_SUMMARY": directory + "/s-%t.txt",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let windows = try ContinuousMode.windowFiles(in: directory, prefix: "w-", suffix: ".pprof")
            let requests = try Self.requests(in: received)
            // No call was asked for: profiles only, one per window (the last one at exit, within the pushers' 2 s).
            #expect(requests.allSatisfy { $0["path"] as? String == "/v1development/profiles" }, "\(requests.map { $0["path"] ?? "?" })")
            try #require(requests.count == windows.count && windows.count >= 4, "\(requests.count) pushes for \(windows.count) windows\n\(run.stderr)")
            var previousEnd = 0
            for (request, window) in zip(requests, windows) {
                #expect((request["problems"] as? [String]) == [], "\(request["problems"] ?? "")")
                #expect(request["content_encoding"] as? String == "gzip")
                let resource = try #require(request["resource"] as? [String: Any])
                #expect(resource["service.name"] as? String == "shop")
                #expect(resource["deployment.environment.name"] as? String == "test,e2e")
                #expect(resource["process.executable.name"] as? String == "window_service")
                #expect(resource["process.pid"] as? Int == Int(run.pid))
                #expect(resource["telemetry.sdk.name"] as? String == "stacksampler")
                let profiles = try #require(request["profiles"] as? [[String: Any]])
                #expect(profiles.map { $0["sample_type"] as? String } == ["samples/count", "cpu/nanoseconds"])
                try #require(profiles.count == 2)
                let stacks = try #require(profiles[0]["stacks"] as? [String: Int])
                let pprofStacks = try GoPprof.stacks(window, in: directory)
                #expect(stacks == pprofStacks, "window \(window): OTLP and pprof stacks differ")
                let total = try #require(profiles[0]["total"] as? Int)
                #expect(total == pprofStacks.values.reduce(0, +) && total > 0)
                #expect(profiles[1]["total"] as? Int == total * 10_000_000)
                let start = try #require(profiles[0]["time_unix_nano"] as? Int), length = try #require(profiles[0]["duration_nano"] as? Int)
                // In order (the realtime offset of each window may differ by some ns), and now.
                #expect(start + 1_000_000 >= previousEnd && abs(Int(Date().timeIntervalSince1970) - start / 1_000_000_000) < 60,
                        "windows out of order: \(start) after \(previousEnd)")
                previousEnd = start + length
            }
            let headers = try String(contentsOfFile: received + "/1.headers", encoding: .utf8)
            #expect(headers.contains("api-key: k=1") && headers.contains("content-type: application/x-protobuf")
                    && headers.contains("content-encoding: gzip"), "\(headers)")
            let summaries = try ContinuousMode.windowFiles(in: directory, prefix: "s-", suffix: ".txt")
            let summary = try String(contentsOfFile: try #require(summaries.last), encoding: .utf8)
            #expect(summary.contains("otlp_push: "), "the window's profile does not say what the OTLP pusher did\n\(summary)")
        }

        @Test("a grpc protocol is refused with a clear message: nothing is pushed, the windows are still written, the program runs unharmed")
        func grpcIsRefusedAndTheProgramRuns() throws {
            let (directory, received, collector, port) = try Self.startCollector("otlp-grpc")
            defer { collector.terminate() }
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["1.2", "1"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "500ms",
                "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:\(port)", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                "STACKSAMPLER_OUTPUT": directory + "/w-%t.folded",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            #expect(run.stdout.contains("hot_cpu_us "), "\(run)")
            #expect(run.stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc") && run.stderr.contains("http/protobuf"), "\(run.stderr)")
            #expect(try ContinuousMode.windowFiles(in: directory, prefix: "w-", suffix: ".folded").count >= 2)
            #expect(try Self.requests(in: received).isEmpty)
        }
    }
}
