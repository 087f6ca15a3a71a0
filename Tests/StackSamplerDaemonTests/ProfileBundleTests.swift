import StackSampler
import Testing
@testable import StackSamplerDaemon

/// Several formats of one profile in one answer (`format=pprof,folded`).
@Suite struct ProfileBundleTests {
    @Test("format=a,b routes one profile in each; a repeated or unknown format is a 400")
    func routes() {
        let route = Routes.route(method: "GET", path: "/debug/stacksampler/profile", arguments: [("seconds", "2"), ("format", "pprof,folded,svg")],
                                 hasBody: false, maxSeconds: 300)
        #expect(route == .profile(ProfileQuery(seconds: 2, mode: .cpu, format: .pprof, attachmentName: "profile.pb.gz", moreFormats: [.folded, .svg])))
        for bad in ["pprof,pprof", "pprof,", "pprof,heap"] {
            let refused = Routes.route(method: "GET", path: "/debug/stacksampler/profile", arguments: [("format", bad)], hasBody: false, maxSeconds: 300)
            guard case .respond(let response) = refused else {
                Issue.record("\(bad) was accepted")
                continue
            }
            #expect(response.status == 400)
        }
    }

    @Test("a bundle holds each format exactly as rendered alone, and reads back")
    func roundTrip() throws {
        let profile = try Profile(collapsedStacks: "main;work 3\nmain;rest 1\n", command: "test")
        let query = ProfileQuery(seconds: 1, mode: .cpu, format: .folded, attachmentName: nil, moreFormats: [.speedscope])
        let response = Routes.response(for: profile, query)
        #expect(response.headers.contains(HTTPHeader("Content-Type", ProfileBundle.contentType)))
        let parts = try #require(ProfileBundle.decode(response.body))
        #expect(parts[.folded] == profile.rendered(as: .folded))
        #expect(parts[.speedscope] == profile.rendered(as: .speedscope))
        #expect(ProfileBundle.decode(Array("stacksampler-bundle 1\nfolded 99\nabc".utf8)) == nil)
    }
}
