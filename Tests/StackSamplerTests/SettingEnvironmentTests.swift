import Testing
@testable import StackSampler
import StackSamplerDaemon

/// One environment reader for every front end, with one rule: a variable set to the empty
/// string is unset, so its setting takes its default instead of being refused.
@Suite struct SettingEnvironmentTests {
    @Test("an empty variable is unset, even for a setting that refuses the empty text")
    func emptyIsUnset() throws {
        let environment = SettingEnvironment([SessionSettings.period.variable: "", SessionSettings.push.variable: "",
                                              SessionSettings.asyncStacks.variable: ""])
        #expect(throws: SettingError.self) { try SessionSettings.period.parse("", from: .environment) }
        #expect(try environment.value(SessionSettings.period) == nil)
        #expect(try environment.value(SessionSettings.push) == nil)
        // Before the one reader the preload took an empty switch as 0: async stacks off.
        #expect(try environment.value(SessionSettings.asyncStacks) == nil)
        #expect(environment.text(SessionSettings.period.variable) == nil)
    }

    @Test("a set variable is parsed, an unset one is nil, and a refused one is named with its variable, its value and the accepted range")
    func aSetVariableIsParsedAndARefusedOneNamed() throws {
        let environment = SettingEnvironment([SessionSettings.period.variable: "2ms", SessionSettings.maxDepth.variable: "0"])
        #expect(try environment.value(SessionSettings.period) == .milliseconds(2))
        #expect(try environment.value(SessionSettings.mode) == nil)
        do {
            _ = try environment.value(SessionSettings.maxDepth)
            Issue.record("max depth 0 was accepted")
        } catch {
            #expect(error.description == "STACKSAMPLER_MAX_DEPTH=0 is not a depth; use a whole number from 1 to 4096")
        }
    }

    @Test("the daemon and the push read empty variables as unset, as the preload does")
    func daemonAndPushTakeTheSameRule() throws {
        let daemon = try DaemonSettings.fromEnvironment(SettingEnvironment([
            SessionSettings.listen.variable: "", SessionSettings.push.variable: "", SessionSettings.maxRequestSeconds.variable: "",
        ]))
        #expect(!daemon.isActive)
        #expect(daemon.maxRequestSeconds == SessionSettings.maxRequestSeconds.defaultValue)
        // An empty STACKSAMPLER_PUSH was refused as "not a back end URL" before.
        #expect(try PushSettings.read { [SessionSettings.push.variable: ""][$0] } == nil)
        let push = try #require(try PushSettings.read {
            [SessionSettings.push.variable: "http://127.0.0.1:4040", SessionSettings.pushBasicAuth.variable: "",
             SessionSettings.pushQueue.variable: ""][$0]
        })
        #expect(push.credentials == .none)
        #expect(push.queueLength == SessionSettings.pushQueue.defaultValue)
    }
}
