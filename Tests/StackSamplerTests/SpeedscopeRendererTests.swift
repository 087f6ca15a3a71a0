import Foundation
import Testing
@testable import StackSampler
import TestSupport

@Suite struct SpeedscopeRendererTests {
    /// The rendered profile parsed as JSON.
    private func document(_ profile: Profile) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(profile.rendered(as: .speedscope))) as? [String: Any])
    }

    @Test("the speedscope file has the schema's required fields and one sampled profile per thread, weighed in nanoseconds of the period")
    func hasTheSchemasRequiredFieldsAndOneSampledProfilePerThread() throws {
        let profile = handMadeProfile()
        let json = try document(profile)
        #expect(json["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
        #expect(json["exporter"] is String)
        #expect(json["name"] is String)
        let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
        #expect(frames.allSatisfy { $0["name"] is String })
        let profiles = try #require(json["profiles"] as? [[String: Any]])
        #expect(profiles.compactMap { $0["name"] as? String }.sorted() == profile.threads.map { "\($0.name) tid=\($0.id)" }.sorted())
        let period = Int(try #require(profile.configuration).periodNanoseconds)
        for (entry, thread) in zip(profiles, profile.threads) {
            #expect(entry["type"] as? String == "sampled")
            #expect(entry["unit"] as? String == "nanoseconds")
            #expect(entry["startValue"] as? Int == 0)
            let samples = try #require(entry["samples"] as? [[Int]])
            let weights = try #require(entry["weights"] as? [Int])
            #expect(samples.count == weights.count)
            #expect(samples.joined().allSatisfy { frames.indices.contains($0) })
            #expect(weights.reduce(0, +) == thread.samples * period)
            #expect(entry["endValue"] as? Int == weights.reduce(0, +))
        }
    }

    @Test("speedscope samples are root first and add up to the same stacks as the folded output")
    func samplesAreRootFirstAndMatchTheFoldedStacks() throws {
        let profile = handMadeProfile()
        let json = try document(profile)
        let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]]).map { $0["name"] as! String }
        let profiles = try #require(json["profiles"] as? [[String: Any]])
        var lines: [String: Int] = [:]
        let period = Int(try #require(profile.configuration).periodNanoseconds)
        for entry in profiles {
            let root = "[" + (entry["name"] as! String) + "]"
            for (stack, weight) in zip(entry["samples"] as! [[Int]], entry["weights"] as! [Int]) {
                lines[([root] + stack.map { frames[$0] }).joined(separator: ";"), default: 0] += weight / period
            }
        }
        var expected: [String: Int] = [:]
        for stack in profile.stacks {
            let thread = profile.threads[stack.thread]
            let names = ["[\(thread.name) tid=\(thread.id)]"] + (stack.cut.map { [$0.marker] } ?? []) + stack.addresses.map(profile.name(of:))
            expected[names.joined(separator: ";"), default: 0] += stack.count
        }
        #expect(lines == expected)
    }

    @Test("an imported profile's speedscope samples are weighed by their counts, without a unit")
    func importedProfilesWeighSamplesByCount() throws {
        let json = try document(Profile(collapsedStacks: "a;b 3\na 2", command: "x.folded"))
        let entry = try #require((json["profiles"] as? [[String: Any]])?.first)
        #expect(entry["unit"] as? String == "none")
        #expect((entry["weights"] as? [Int])?.reduce(0, +) == 5)
    }
}
