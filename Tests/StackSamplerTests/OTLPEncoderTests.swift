import Foundation
import Testing
@testable import StackSampler
import TestSupport

/// The OTLP encoders, read back with the official definitions.
@Suite struct OTLPEncoderTests {
    let resource = OTLPResource([OTLPAttribute("service.name", .string("checkout")), OTLPAttribute("process.pid", .int(4242))])

    @Test("spans decoded with the official definitions nest as the calls did, with the calls' names, times and threads")
    func spansNestAsTheCallsDid() throws {
        let profile = profileWithCalls()
        let decoded = try decodedOTLP(OTLPTracesEncoder.request(profile.invocations, of: profile, realtimeOffset: offset(of: profile),
                                                                resource: resource, session: 7), signal: "traces")
        #expect((decoded["problems"] as? [String]) == [])
        #expect((decoded["resource"] as? [String: Any])?["service.name"] as? String == "checkout")
        #expect((decoded["resource"] as? [String: Any])?["process.pid"] as? Int == 4242)
        #expect(decoded["scope"] as? String == "stacksampler")
        let spans = try #require(decoded["spans"] as? [[String: Any]])
        try #require(spans.count == 4)
        let byName = { (index: Int) in spans[index] }
        let (main, parse, find, other) = (byName(0), byName(1), byName(2), byName(3))
        #expect(main["parent_span_id"] as? String == "")
        #expect(parse["parent_span_id"] as? String == main["span_id"] as? String)
        #expect(find["parent_span_id"] as? String == parse["span_id"] as? String)
        #expect(other["parent_span_id"] as? String == "")
        // One trace per root call: the same for a root and its callees, another for the next root.
        #expect(main["trace_id"] as? String == find["trace_id"] as? String)
        #expect(main["trace_id"] as? String != other["trace_id"] as? String)
        #expect(Set(spans.compactMap { $0["span_id"] as? String }).count == 4)
        #expect(spans.map { $0["name"] as? String } == ["main", "parse", "std::map<int:int>::find", "main"])
        for (span, call) in zip(spans, profile.invocations) {
            // Unix ns: the call's monotonic times moved by the profile's realtime offset, exactly.
            let start = try #require(span["start"] as? Int), end = try #require(span["end"] as? Int)
            #expect(start == Int(call.startNanoseconds - 1_000_000_000 + 1_750_000_000_000_000_000))
            #expect(end - start == Int(call.durationNanoseconds))
            #expect(span["kind"] as? Int == 1)
            let attributes = try #require(span["attributes"] as? [String: Any])
            #expect(attributes["code.function.name"] as? String == call.name)
            #expect(attributes["thread.id"] as? Int == Int(profile.threads[call.thread].id))
            #expect(attributes["thread.name"] as? String == profile.threads[call.thread].name)
            #expect(attributes["stacksampler.samples"] as? Int == call.samples)
        }
        // Children inside their parents.
        #expect((main["start"] as! Int) <= (parse["start"] as! Int) && (parse["end"] as! Int) <= (main["end"] as! Int))
    }

    @Test("trace ids depend on the session and the root call only, so calls sent in different requests share their trace")
    func traceIDsAreStableAcrossRequests() throws {
        let profile = profileWithCalls()
        func traceID(_ call: Int, session: UInt64) throws -> String? {
            let body = OTLPTracesEncoder.request([profile.invocations[call]], of: profile, realtimeOffset: offset(of: profile),
                                                 resource: resource, session: session)
            return (try decodedOTLP(body, signal: "traces")["spans"] as? [[String: Any]])?.first?["trace_id"] as? String
        }
        let root = try traceID(0, session: 7), callee = try traceID(2, session: 7), otherSession = try traceID(0, session: 8)
        #expect(root != nil && root == callee)
        #expect(root != otherSession)
    }

    /// CLOCK_REALTIME − CLOCK_MONOTONIC at `profile`'s start.
    func offset(of profile: Profile) -> UInt64 { profile.realtimeStartNanoseconds &- profile.startNanoseconds }

    @Test("an OTLP profile decoded with the official definitions holds the pprof's samples, stacks and threads, per sample type")
    func profileMatchesThePprof() throws {
        let profile = handMadeProfile()
        let pprof = try DecodedPprof(gzipped: profile.rendered(as: .pprof))
        let decoded = try decodedOTLP(OTLPProfilesEncoder.request(profile, resource: resource, session: 7), signal: "profiles")
        #expect((decoded["problems"] as? [String]) == [])
        #expect((decoded["resource"] as? [String: Any])?["service.name"] as? String == "checkout")
        let profiles = try #require(decoded["profiles"] as? [[String: Any]])
        #expect(profiles.map { $0["sample_type"] as? String } == pprof.sampleTypes.map { "\($0.type)/\($0.unit)" })
        try #require(profiles.count == 2)
        let period = try #require(profile.configuration?.sampleWeight)
        for (index, decodedProfile) in profiles.enumerated() {
            let weight = index == 0 ? 1 : Int64(period)
            let stacks = try #require(decodedProfile["stacks"] as? [String: Int])
            #expect(stacks == pprof.foldedStacks().mapValues { Int($0 * weight) })
            #expect(decodedProfile["total"] as? Int == pprof.samples.reduce(0) { $0 + Int($1.values[index]) })
            #expect(decodedProfile["period"] as? Int == Int(pprof.period))
            #expect(decodedProfile["period_type"] as? String == "cpu/nanoseconds")
            let threads = try #require(decodedProfile["threads"] as? [String: Int])
            #expect(threads == ["100 main": 7 * Int(weight), "101 worker;1": 4 * Int(weight)])
        }
        #expect(profiles[0]["profile_id"] as? String != profiles[1]["profile_id"] as? String)
    }
}
