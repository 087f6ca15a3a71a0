import Foundation
import Testing

extension EndToEnd {
    /// Pushes from a profiled child process to a stand-in for Pyroscope's ingest endpoint
    /// (Tests/Programs/ingest_receiver.py), each request checked against the documented API.
    @Suite struct ContinuousPush {
        /// The receiver (`script` in Tests/Programs, which prints `port N` once listening), listening;
        /// its requests land in `directory`.
        static func startReceiver(in directory: String, script: String = "ingest_receiver.py") throws -> (Process, UInt16) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", PackagePaths.root + "/Tests/Programs/" + script, directory, "60"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            var line = [UInt8]()
            while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("port "), let port = UInt16(text.dropFirst(5)) else {
                process.terminate()
                throw HarnessError("\(script) did not start: '\(text)'")
            }
            return (process, port)
        }

        /// `name=value` pairs of a query, percent-decoded.
        static func parameters(_ query: String) -> [String: String] {
            Dictionary(query.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                return (parts[0], parts.count > 1 ? parts[1] : "")
            }, uniquingKeysWith: { first, _ in first })
        }

        @Test("every window of a profiled service reaches the back end as Pyroscope's ingest API documents it, and go tool pprof reads it")
        func windowsArePushed() throws {
            let directory = try ScratchDirectory.make("continuous-push")
            let received = directory + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let (receiver, port) = try Self.startReceiver(in: received)
            defer { receiver.terminate() }
            let run = try ChildProcess.run(try TestProgram.windowService.executable(), ["2.2", "2"], environment: [
                "LD_PRELOAD": try BuildProducts.preloadLibrary(), "STACKSAMPLER_CONTINUOUS": "500ms",
                "STACKSAMPLER_PUSH": "http://127.0.0.1:\(port)", "STACKSAMPLER_APP_NAME": "svc{env=test,region=eu}",
                "STACKSAMPLER_PUSH_TENANT": "team-a", "STACKSAMPLER_PUSH_TOKEN": "secret-token",
                "STACKSAMPLER_OUTPUT": directory + "/w-%t.folded",
            ], in: directory)
            #expect(run.termination == .exited(0), "\(run)")
            let windows = try ContinuousMode.windowFiles(in: directory, prefix: "w-", suffix: ".folded")
            let queries = try FileManager.default.contentsOfDirectory(atPath: received).filter { $0.hasSuffix(".query") }
                .compactMap { Int($0.dropLast(6)) }.sorted()
            // Every window written is pushed too (the last one at exit, within the pusher's 2 s).
            #expect(queries.count == windows.count && queries.count >= 4, "\(queries.count) pushes for \(windows.count) windows\n\(run.stderr)")
            var previousUntil = 0
            var hotSamples = 0
            for number in queries {
                let base = "\(received)/\(number)"
                let query = try String(contentsOfFile: base + ".query", encoding: .utf8)
                let parameters = Self.parameters(query)
                #expect(parameters["name"] == "svc{env=test,region=eu}", "\(query)")
                #expect(parameters["format"] == "pprof" && parameters["spyName"] == "stacksampler" && parameters["sampleRate"] == "100", "\(query)")
                let from = try #require(parameters["from"].flatMap { Int($0) }, "\(query)")
                let until = try #require(parameters["until"].flatMap { Int($0) }, "\(query)")
                #expect(from <= until && until - from <= 2 && abs(Int(Date().timeIntervalSince1970) - until) < 60, "\(query)")
                #expect(from + 1 >= previousUntil, "windows pushed out of order: \(query)")
                previousUntil = until
                let headers = try String(contentsOfFile: base + ".headers", encoding: .utf8)
                #expect(headers.contains("x-scope-orgid: team-a"), "\(headers)")
                #expect(headers.contains("authorization: Bearer secret-token"), "\(headers)")
                let samples = try GoPprof.selfSamples(base + ".pprof", in: directory)
                hotSamples += samples["serve_hot"] ?? 0
            }
            #expect(hotSamples > 50, "serve_hot in the pushed windows: \(hotSamples) samples")
            let summary = try String(contentsOfFile: try #require(windows.last) + ".summary", encoding: .utf8)
            #expect(summary.contains("push: "), "the window's profile does not say what the pusher did\n\(summary)")
        }
    }
}
