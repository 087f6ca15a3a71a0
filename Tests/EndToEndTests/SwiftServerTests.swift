import Foundation
import Testing

extension EndToEnd {
    /// A real Swift server: the Hummingbird 2 service of Tests/Services/hb-service, built in
    /// release, preloaded at the default 10 ms and put under load by wrk on each route in turn.
    /// Its route functions' samples carry the awaiting chain up to the server's connection
    /// handling, through the middleware and the route's handler; no caller is one the code has not.
    @Suite struct SwiftServer {
        /// A route: the function that burns its CPU, the async function that awaits it, and the
        /// router's closure for the route (main.swift's first and second).
        struct Route {
            let path: String
            let work: String
            let page: String
            let handler: String
        }

        static let routes = [Route(path: "users", work: "renderUsers(count:)", page: "usersPage()", handler: "closure #1 in HBService"),
                             Route(path: "orders", work: "renderOrders(count:)", page: "ordersPage()", handler: "closure #2 in HBService")]

        /// Frames every route sample's async callers pass through, root first: the server's
        /// handling of the connection, the middleware (then the route's handler).
        static let serverCallers = ["HTTPChannelHandler.handleHTTP(asyncChannel:logger:)", "TimingMiddleware.handle(_:context:next:)"]

        /// What one profiled run of the service under load gave.
        struct ServedRun {
            let profile: FoldedProfile
            let summary: String
            /// Requests wrk completed, and those the service counted.
            let completed: Int
            let served: Int?
            let termination: Int32
        }

        /// Starts the service preloaded in `setting`, puts each route under `wrk -t1 -c8` for
        /// `seconds`, stops it with SIGTERM and reads its profile.
        static func serve(mode: String, setting: RunSetting, seconds: Int = 3) throws -> ServedRun {
            let directory = try ScratchDirectory.make("hb-\(mode)-\(setting == .root ? "root" : "user")")
            setting.prepare(directory)
            let output = directory + "/profile.folded"
            let (command, environment) = try setting.command(
                [try SwiftService.hummingbird.executable()],
                environment: ["LD_PRELOAD": try setting.preloadLibrary(), "STACKSAMPLER_OUTPUT": output, "STACKSAMPLER_MODE": mode])
            let process = Process()
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst())
            var childEnvironment = ProcessInfo.processInfo.environment.filter { $0.key != "LD_PRELOAD" && !$0.key.hasPrefix("STACKSAMPLER_") }
            childEnvironment.merge(environment) { _, new in new }
            process.environment = childEnvironment
            let stdoutPath = directory + "/service.stdout", stderrPath = directory + "/service.stderr"
            _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
            _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
            process.standardOutput = FileHandle(forWritingAtPath: stdoutPath)
            process.standardError = FileHandle(forWritingAtPath: stderrPath)
            try process.run()
            defer { ForkingService.killTree(process.processIdentifier) }
            let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
            var port: Int?
            let listening = ForkingService.waitFor(seconds: 30) {
                port = read(stdoutPath).split(separator: "\n").first { $0.hasPrefix("listening ") }.flatMap { Int($0.dropFirst(10)) }
                return port != nil || !process.isRunning
            }
            guard listening, let port else {
                throw HarnessError("the service did not say where it listens: \(read(stdoutPath)) \(read(stderrPath))")
            }
            var completed = 0
            for route in routes {
                let load = try ChildProcess.run("/usr/bin/wrk", ["-t1", "-c8", "-d\(seconds)s", "http://127.0.0.1:\(port)/\(route.path)"],
                                                in: directory, timeout: .seconds(seconds + 60))
                #expect(load.termination == .exited(0), "\(load)")
                let requests = load.stdout.firstMatch(of: /(\d+) requests in/).flatMap { Int($0.1) }
                #expect((requests ?? 0) > 100, "wrk on /\(route.path): \(load.stdout)")
                completed += requests ?? 0
            }
            kill(process.processIdentifier, SIGTERM)
            #expect(ForkingService.waitFor(seconds: 30) { !process.isRunning }, "the service did not stop on SIGTERM: \(read(stderrPath))")
            process.waitUntilExit()
            let served = read(stdoutPath).firstMatch(of: /served (\d+)/).flatMap { Int($0.1) }
            return ServedRun(profile: try FoldedProfile(contentsOf: output), summary: read(output + ".summary") + read(stderrPath),
                             completed: completed, served: served, termination: process.terminationStatus)
        }

        /// The samples of `route`'s work, and those whose stack is the async chain from the
        /// server's connection handling down to the route's page and its work.
        static func routeSamples(_ profile: FoldedProfile, _ route: Route) -> (all: Int, carrying: Int) {
            var all = 0, carrying = 0
            for stack in profile.stacks {
                guard let at = stack.frames.firstIndex(of: route.work) else { continue }
                all += stack.count
                let above = stack.frames[..<at]
                var rest = above[...]
                let inOrder = (serverCallers + [route.handler]).allSatisfy { caller in
                    guard let found = rest.firstIndex(where: { $0.hasPrefix(caller) }) else { return false }
                    rest = rest[(found + 1)...]
                    return true
                }
                if stack.frames.first == "[async]", above.last == route.page, inOrder { carrying += stack.count }
            }
            return (all, carrying)
        }

        /// The checks every run passes: the service unharmed, each route's samples with their async callers.
        static func expectServed(_ run: ServedRun, minimumRouteSamples: Int) {
            let stacks = run.profile.stacks.sorted { $0.count > $1.count }.prefix(40).map { $0.frames.joined(separator: ";") + " \($0.count)" }.joined(separator: "\n")
            #expect(run.termination == 0, "\(run.summary)")
            // Every request wrk completed was served; at most one per connection more (in flight as wrk stopped).
            #expect(run.served.map { $0 >= run.completed && $0 <= run.completed + 16 } == true, "served \(run.served ?? -1) for \(run.completed) completed")
            for route in routes {
                let samples = routeSamples(run.profile, route)
                print("hummingbird: \(route.work) \(samples.carrying) of \(samples.all) samples with their async callers")
                #expect(samples.all >= minimumRouteSamples, "\(route.work): \(samples)\n\(run.summary)\n\(stacks)")
                #expect(Double(samples.carrying) >= 0.9 * Double(samples.all), "\(route.work): \(samples)\n\(run.summary)\n\(stacks)")
                // Never under the other route's page.
                let other = routes.first { $0.path != route.path }!
                let invented = run.profile.stacks.filter { $0.frames.contains(route.work) && $0.frames.contains(other.page) }
                #expect(invented.isEmpty, "\(route.work) under \(other.page): \(invented.map { $0.frames.joined(separator: ";") })")
            }
        }

        @Test("cpu mode: the routes' samples carry their async callers, from the server's connection handling through the middleware")
        func cpuMode() throws {
            let run = try Self.serve(mode: "cpu", setting: .root)
            Self.expectServed(run, minimumRouteSamples: 50)
        }

        /// Wall mode: the event-loop threads asleep in epoll_wait, the executor's threads parked,
        /// are walked whole (before, 42 % of the samples ended early there).
        @Test("wall mode: 95 % of the stacks are whole, the routes' samples carry their async callers", arguments: RunSetting.allCases)
        func wallMode(setting: RunSetting) throws {
            let run = try Self.serve(mode: "wall", setting: setting)
            Self.expectServed(run, minimumRouteSamples: 50)
            let cut = run.profile.stacks.filter { ["[no unwind info]", "[unwind fault]", "[truncated]", "[leaf only]"].contains($0.frames.first ?? "") }
            let cutSamples = cut.reduce(0) { $0 + $1.count }
            print("hummingbird: wall, \(setting): \(cutSamples) of \(run.profile.totalSamples) samples cut")
            #expect(Double(cutSamples) <= 0.05 * Double(run.profile.totalSamples),
                    "\(cutSamples) of \(run.profile.totalSamples) cut:\n\(cut.prefix(20).map { $0.frames.joined(separator: ";") + " \($0.count)" }.joined(separator: "\n"))")
        }
    }
}
