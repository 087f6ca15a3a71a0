import Foundation
import Testing
@testable import StackSampler

/// Layout of invocations for trace viewers, and the formats written from it.
@Suite struct InvocationTimelineTests {
    /// A profile of two threads. On thread 0, `caller` (0–100 µs) calls `first` (10–52) and
    /// `second` (48–103): `second` overlaps `first` and outlasts its caller, as sampling jitter
    /// can make it; `inner` (50–60) is under `second`, `orphan` has a parent that was dropped.
    static func profile() -> Profile {
        func invocation(_ id: UInt64, _ parent: UInt64?, thread: Int, _ name: String, depth: Int, from start: UInt64, to end: UInt64) -> Profile.Invocation {
            Profile.Invocation(id: id, parentID: parent, traceID: 1, thread: thread, name: name, depth: depth,
                               startNanoseconds: 1_000_000 + start * 1000, durationNanoseconds: (end - start) * 1000, samples: 3)
        }
        var profile = Profile(configuration: ProfilerConfiguration(period: .microseconds(10), mode: .wall, invocations: InvocationConfiguration()),
                              startNanoseconds: 1_000_000, durationNanoseconds: 200_000, signal: "SIGALRM", signalSubstituted: false,
                              stacks: [], threads: [Profile.Thread(id: 41, name: "main", samples: 20, cpuNanoseconds: 0, observedNanoseconds: 0),
                                                    Profile.Thread(id: 42, name: "worker \"w\"", samples: 5, cpuNanoseconds: 0, observedNanoseconds: 0)],
                              frames: [:], modules: [], losses: Profile.Losses())
        profile.processID = 41
        profile.realtimeStartNanoseconds = 1_700_000_000_000_000_000
        profile.invocations = [
            invocation(1, nil, thread: 0, "caller", depth: 0, from: 0, to: 100),
            invocation(2, 1, thread: 0, "first", depth: 1, from: 10, to: 52),
            invocation(3, 1, thread: 0, "second", depth: 1, from: 48, to: 103),
            invocation(4, 3, thread: 0, "inner", depth: 2, from: 50, to: 60),
            invocation(5, 99, thread: 0, "orphan", depth: 3, from: 120, to: 130),
            invocation(6, nil, thread: 1, "work", depth: 0, from: 5, to: 25),
        ]
        profile.invocationCounts.kept = 6
        profile.invocationCounts.dropped = 4
        return profile
    }

    @Test("the timeline puts each call inside its caller and starts a sibling where the one before it ended")
    func spansNestAndSiblingsFollowEachOther() throws {
        let profile = Self.profile()
        let timeline = InvocationTimeline(profile.invocations)
        #expect(timeline.threads.map(\.thread) == [0, 1])
        let spans = timeline.threads[0].spans
        let byName = Dictionary(uniqueKeysWithValues: spans.map { (profile.invocations[$0.invocation].name, $0) })
        let micro: (UInt64) -> UInt64 = { 1_000_000 + $0 * 1000 }
        #expect(byName["first"]?.start == micro(10) && byName["first"]?.end == micro(52))
        // `second` starts where `first` ended and ends with its caller.
        #expect(byName["second"]?.start == micro(52) && byName["second"]?.end == micro(100))
        #expect(byName["inner"]?.start == micro(52) && byName["inner"]?.end == micro(60))
        #expect(byName["orphan"]?.parent == nil && byName["orphan"]?.start == micro(120))
        for span in spans {
            guard let parent = span.parent.map({ spans[$0] }) else { continue }
            #expect(span.start >= parent.start && span.end <= parent.end)
        }
    }

    @Test("speedscope events of the calls open and close in time order, balanced, one profile per thread, the dropped calls named")
    func speedscopeEventsBalanceInOrder() throws {
        let data = Data(Self.profile().renderedInvocations(as: .speedscope))
        let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(file["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        #expect((file["name"] as? String)?.contains("4 dropped") == true)
        let frames = try #require((file["shared"] as? [String: Any])?["frames"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        let profiles = try #require(file["profiles"] as? [[String: Any]])
        #expect(profiles.map { $0["name"] as? String } == ["main (tid 41)", "worker \"w\" (tid 42)"])
        var opened: [String] = []
        for profile in profiles {
            var stack: [Int] = []
            var last = -1
            for event in try #require(profile["events"] as? [[String: Any]]) {
                let at = try #require(event["at"] as? Int)
                let frame = try #require(event["frame"] as? Int)
                #expect(at >= last)
                last = at
                if event["type"] as? String == "O" {
                    stack.append(frame)
                    opened.append(frames[frame])
                } else {
                    #expect(stack.popLast() == frame)
                }
            }
            #expect(stack.isEmpty)
            #expect(profile["endValue"] as? Int == last)
        }
        #expect(opened == ["caller", "first", "second", "inner", "orphan", "work"])
    }

    @Test("the Chrome trace and the spans carry every call with its times, thread, ids and parent, and the dropped count")
    func chromeTraceAndSpansCarryEveryInvocation() throws {
        let profile = Self.profile()
        let trace = try #require(try JSONSerialization.jsonObject(with: Data(profile.renderedInvocations(as: .chrome))) as? [String: Any])
        let events = try #require(trace["traceEvents"] as? [[String: Any]])
        let complete = events.filter { $0["ph"] as? String == "X" }
        #expect(complete.compactMap { $0["name"] as? String } == profile.invocations.map(\.name))
        let second = try #require(complete.first { $0["name"] as? String == "second" })
        #expect(second["ts"] as? Double == 52 && second["dur"] as? Double == 48 && second["tid"] as? Int == 41)
        let names = events.filter { $0["ph"] as? String == "M" }.compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
        #expect(names == ["main", "main (tid 41)", "worker \"w\" (tid 42)"])
        #expect((trace["otherData"] as? [String: Any])?["droppedInvocations"] as? Int == 4)

        let spans = try #require(try JSONSerialization.jsonObject(with: Data(profile.renderedInvocations(as: .spans))) as? [String: Any])
        let list = try #require(spans["spans"] as? [[String: Any]])
        #expect(list.count == profile.invocations.count)
        let inner = try #require(list.first { $0["operationName"] as? String == "inner" })
        #expect(inner["startTimeMicros"] as? Int == 1_700_000_000_000_052 && inner["duration"] as? Int == 8)
        let context = try #require(inner["spanContext"] as? [String: Any])
        #expect(context["id"] as? String == "0000000000000004" && context["parentId"] as? String == "0000000000000003")
        #expect(context["traceId"] as? String == "0000000000000001")
        #expect(spans["droppedSpans"] as? Int == 4)
    }
}
