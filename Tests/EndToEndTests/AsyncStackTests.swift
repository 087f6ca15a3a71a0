import Foundation
import Testing

extension EndToEnd {
    /// Swift async call stacks: a sample taken in a Swift job shows the task's async
    /// callers, read from the async contexts, in place of the executor frames; never a caller
    /// the program does not have.
    @Suite struct AsyncStacks {
        /// The program's functions and the callers each has in the source.
        static let callers: [String: Set<String>] = [
            "outerRequest(": [], "middleStage(": ["outerRequest("], "otherStage(": ["outerRequest("],
            "noteOnMain(": ["outerRequest("], "leafWork(": ["middleStage("], "burn(": ["leafWork(", "otherStage("],
            "loopStage(": ["outerRequest("], "step(": ["loopStage("],
        ]

        /// The program's function `frame` belongs to (by its name's start), if any.
        static func function(_ frame: String) -> String? {
            callers.keys.first { frame.hasPrefix($0) }
        }

        /// Samples with `path` (function name starts, root first) right above `burn`, and those of
        /// them whose frames above are `callersAbove` (root first) right before it.
        static func burnSamples(_ profile: FoldedProfile, under caller: String, callersAbove: [String]) -> (all: Int, carrying: Int) {
            var all = 0, carrying = 0
            for stack in profile.stacks {
                let names = stack.frames
                guard let at = names.indices.dropLast().first(where: { names[$0].hasPrefix(caller) && names[$0 + 1].hasPrefix("burn(") })
                else { continue }
                all += stack.count
                let above = names[..<at].suffix(callersAbove.count)
                if above.count == callersAbove.count, zip(above, callersAbove).allSatisfy({ $0.hasPrefix($1) }) { carrying += stack.count }
            }
            return (all, carrying)
        }

        /// Stacks in which two of the program's functions follow each other (in the order they
        /// appear, other frames between them allowed) although the first does not call the second.
        static func inventedCallers(_ profile: FoldedProfile) -> [String] {
            profile.stacks.compactMap { stack in
                let ours = stack.frames.compactMap(function)
                let invented = zip(ours, ours.dropFirst()).contains { !callers[$1, default: []].contains($0) }
                return invented ? stack.frames.joined(separator: ";") : nil
            }
        }

        /// Stacks with more than one of the program's async functions: a machine stack has only the
        /// innermost, under the executor.
        static func asyncCallerStacks(_ profile: FoldedProfile) -> [String] {
            let asyncFunctions = ["outerRequest(", "middleStage(", "otherStage(", "loopStage(", "leafWork("]
            return profile.stacks.filter { stack in
                stack.frames.filter { frame in asyncFunctions.contains { frame.hasPrefix($0) } }.count > 1
            }.map { $0.frames.joined(separator: ";") }
        }

        /// The checks every async profile of the program passes.
        static func expectAsyncStacks(_ profile: FoldedProfile, minimumLeafSamples: Int, context: String) {
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }.joined(separator: "\n")
            let leaf = burnSamples(profile, under: "leafWork(", callersAbove: ["outerRequest(", "middleStage("])
            let other = burnSamples(profile, under: "otherStage(", callersAbove: ["outerRequest("])
            #expect(leaf.all >= minimumLeafSamples, "\(context)\n\(stacks)")
            #expect(other.all >= minimumLeafSamples / 8, "\(context)\n\(stacks)")
            #expect(Double(leaf.carrying) >= 0.95 * Double(leaf.all), "\(leaf) \(context)\n\(stacks)")
            #expect(Double(other.carrying) >= 0.95 * Double(other.all), "\(other) \(context)\n\(stacks)")
            #expect(inventedCallers(profile).isEmpty, "\(inventedCallers(profile)) \(context)")
            // A stack with async callers is marked as such at its root.
            let unmarked = profile.stacks.filter { $0.frames.contains { $0.hasPrefix("outerRequest(") } && $0.frames.first != "[async]" }
            #expect(unmarked.reduce(0) { $0 + $1.count } <= leaf.all / 20, "\(context)\n\(stacks)")
            // The executor frames are replaced: none above an async function's frame.
            let executor = profile.stacks.filter { stack in
                stack.frames.contains { $0.hasPrefix("leafWork(") } && stack.frames.contains { $0.hasPrefix("swift_job_run") }
            }
            #expect(executor.reduce(0) { $0 + $1.count } <= leaf.all / 20, "\(context)\n\(stacks)")
        }

        /// The program's answer unprofiled, to compare each profiled run's with.
        static func unprofiledResult(rounds: String) throws -> String {
            let plain = try ChildProcess.run(try TestProgram.asyncStages.executable(), [rounds], in: ScratchDirectory.run)
            #expect(plain.termination == .exited(0), "\(plain)")
            return plain.stdout
        }

        @Test("through the preload library, cpu and wall: burn's samples carry their async callers", arguments: ["cpu", "wall"])
        func preload(mode: String) throws {
            let directory = try ScratchDirectory.make("async-stages-\(mode)")
            let run = try ProfiledRun.preload(
                .asyncStages, ["12"], settings: ["STACKSAMPLER_MODE": mode, "STACKSAMPLER_PERIOD": "1ms"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout == (try Self.unprofiledResult(rounds: "12")), "\(run.process)")
            Self.expectAsyncStacks(try run.profile(), minimumLeafSamples: 60, context: run.process.stderr)
        }

        @Test("STACKSAMPLER_ASYNC_STACKS=0 keeps the machine stacks: executor frames, no async caller")
        func machineStacks() throws {
            let directory = try ScratchDirectory.make("async-stages-off")
            let run = try ProfiledRun.preload(
                .asyncStages, ["6"], settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_ASYNC_STACKS": "0"], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let profile = try run.profile()
            let stacks = profile.stacks.map { $0.frames.joined(separator: ";") + " \($0.count)" }.joined(separator: "\n")
            let leaf = Self.burnSamples(profile, under: "leafWork(", callersAbove: ["swift::runJobInEstablishedExecutorContext"])
            #expect(leaf.all >= 30 && leaf.carrying == leaf.all, "\(leaf)\n\(stacks)")
            #expect(Self.asyncCallerStacks(profile).isEmpty, "\(Self.asyncCallerStacks(profile))")
        }

        /// A copy of the Swift runtime directory the program loads from, whose concurrency runtime
        /// declares layout version `version` (`_swift_concurrency_debug_internal_layout_version`).
        static func runtimeWithLayoutVersion(_ version: UInt32, in directory: String) throws -> String {
            let program = try TestProgram.asyncStages.executable()
            let ldd = try ChildProcess.run("/usr/bin/ldd", [program], in: directory)
            let line = try #require(ldd.stdout.split(separator: "\n").first { $0.contains("libswift_Concurrency.so =>") })
            let runtime = try #require(line.split(separator: " ").first { $0.hasPrefix("/") }.map(String.init))
            let symbols = try ChildProcess.run("/usr/bin/nm", ["-D", runtime], in: directory).stdout
            let symbol = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" _swift_concurrency_debug_internal_layout_version") })
            let address = try #require(UInt64(symbol.prefix { $0 != " " }, radix: 16))
            // The file offset of that address: from the PT_LOAD segment that maps it.
            let segments = try ChildProcess.run("/usr/bin/readelf", ["-lW", runtime], in: directory).stdout
            let offset = try #require(segments.split(separator: "\n").compactMap { line -> UInt64? in
                let fields = line.split(separator: " ")
                guard fields.first == "LOAD", fields.count >= 5, let fileOffset = UInt64(fields[1].dropFirst(2), radix: 16),
                      let start = UInt64(fields[2].dropFirst(2), radix: 16), let size = UInt64(fields[4].dropFirst(2), radix: 16),
                      address >= start, address < start + size else { return nil }
                return address - start + fileOffset
            }.first)
            let copy = directory + "/runtime"
            let original = (runtime as NSString).deletingLastPathComponent
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: original) where name.hasSuffix(".so") {
                if name == "libswift_Concurrency.so" {
                    var bytes = try Data(contentsOf: URL(fileURLWithPath: runtime))
                    withUnsafeBytes(of: version.littleEndian) { bytes.replaceSubrange(Int(offset)..<Int(offset) + 4, with: $0) }
                    try bytes.write(to: URL(fileURLWithPath: copy + "/" + name))
                } else {
                    try FileManager.default.createSymbolicLink(atPath: copy + "/" + name, withDestinationPath: original + "/" + name)
                }
            }
            return copy
        }

        @Test("a concurrency runtime of another layout version is refused with one summary line: machine stacks")
        func unverifiedRuntime() throws {
            let directory = try ScratchDirectory.make("async-stages-runtime-v2")
            let runtime = try Self.runtimeWithLayoutVersion(2, in: directory)
            let run = try ProfiledRun.preload(
                .asyncStages, ["6"],
                settings: ["STACKSAMPLER_PERIOD": "1ms", "STACKSAMPLER_SUMMARY": "-", "LD_LIBRARY_PATH": runtime], in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            #expect(run.process.stdout == (try Self.unprofiledResult(rounds: "6")), "\(run.process)")
            let refusals = run.process.stderrLines.filter { $0.hasPrefix("stacksampler: async stacks: off") }
            #expect(refusals.count == 1 && refusals.first?.contains("layout version 2") == true, "\(run.process.stderr)")
            let profile = try run.profile()
            #expect(Self.asyncCallerStacks(profile).isEmpty, "\(Self.asyncCallerStacks(profile))")
            #expect(profile.inclusiveCount { $0.hasPrefix("swift::runJobInEstablishedExecutorContext") } >= 30)
        }

        @Test("invocations: an async function is one call across its awaits (CLI record, cpu)")
        func invocationsAcrossAwaits() throws {
            let directory = try ScratchDirectory.make("async-stages-invocations")
            let spansPath = directory + "/calls.spans.json"
            let run = try ProfiledRun.record(
                .asyncStages, ["12"],
                options: ["--period", "1ms", "--invocations", spansPath, "--invocation-format", "spans"],
                in: directory)
            #expect(run.process.termination == .exited(0), "\(run.process)")
            let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: URL(fileURLWithPath: spansPath)))
            let spans = try #require((object as? [String: Any])?["spans"] as? [[String: Any]])
            func durations(_ prefix: String) -> [Int] {
                spans.filter { ($0["operationName"] as? String ?? "").hasPrefix(prefix) }.compactMap { $0["duration"] as? Int }.sorted()
            }
            let middle = durations("middleStage("), leaf = durations("leafWork(")
            // middleStage awaits leafWork three times, from three resume points: one call of it
            // spans them (calls of other tasks on the same thread may merge in, never split it).
            #expect(middle.count >= 4 && leaf.count >= 3 * middle.count / 2, "middleStage \(middle), leafWork \(leaf)")
            #expect(middle[middle.count / 2] >= 2 * leaf[leaf.count / 2], "middleStage \(middle), leafWork \(leaf)")
        }

        @Test("through the C API (Profiler.start), cpu and wall: burn's samples carry their async callers", arguments: ["cpu", "wall"])
        func selfProfiling(mode: String) throws {
            let directory = try ScratchDirectory.make("async-stages-self-\(mode)")
            let folded = directory + "/profile.folded"
            let result = try ChildProcess.run(try TestProgram.asyncStagesSelf.executable(), ["12", mode, folded], in: directory)
            #expect(result.termination == .exited(0), "\(result)")
            #expect(ProgramOutput.integer("start", in: result.stdout) == 0, "\(result)")
            #expect(result.stdout.hasSuffix(try Self.unprofiledResult(rounds: "12")), "\(result)")
            Self.expectAsyncStacks(try FoldedProfile(contentsOf: folded), minimumLeafSamples: 60, context: result.stderr)
        }
    }
}
