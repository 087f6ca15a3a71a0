import Testing
@testable import StackSampler

/// Every setting says, through the preload's variable and through `record`'s option alike,
/// which value it refused and what to give instead; the API checks the same ranges.
@Suite struct SessionSettingsTests {
    /// A setting, a value it refuses and one it accepts, type-erased.
    struct Case: CustomStringConvertible, Sendable {
        let variable: String
        let option: String
        let parse: @Sendable (String, SettingSource) throws(SettingError) -> Void
        let refused: String
        let accepted: String
        var description: String { variable }

        init<Value>(_ setting: Setting<Value>, refuses refused: String, accepts accepted: String) {
            variable = setting.variable
            option = setting.option
            parse = { text, source throws(SettingError) in _ = try setting.parse(text, from: source) }
            self.refused = refused
            self.accepted = accepted
        }
    }

    static let cases: [Case] = [
        Case(SessionSettings.period, refuses: "10parsecs", accepts: "500us"),
        Case(SessionSettings.period, refuses: "10us", accepts: "60s"),
        Case(SessionSettings.mode, refuses: "gpu", accepts: "wall"),
        Case(SessionSettings.maxDepth, refuses: "4097", accepts: "4096"),
        Case(SessionSettings.maxDepth, refuses: "0", accepts: "1"),
        Case(SessionSettings.bufferSize, refuses: "15", accepts: "16"),
        Case(SessionSettings.bufferSize, refuses: "1048577", accepts: "1048576"),
        Case(SessionSettings.asyncStacks, refuses: "maybe", accepts: "0"),
        Case(SessionSettings.lines, refuses: "2", accepts: "yes"),
        Case(SessionSettings.format, refuses: "png", accepts: "svg"),
        Case(SessionSettings.invocationFormat, refuses: "json", accepts: "spans"),
        Case(SessionSettings.invocationMinSamples, refuses: "0", accepts: "1"),
        Case(SessionSettings.invocationCapacity, refuses: "-1", accepts: "0"),
        Case(SessionSettings.invocationMaxDepth, refuses: "0", accepts: "3"),
        Case(SessionSettings.invocationMinDuration, refuses: "soon", accepts: "5ms"),
        Case(SessionSettings.stallThreshold, refuses: "-1s", accepts: "250ms"),
    ]

    @Test("a refused value is named with the variable or the option it came through", arguments: cases)
    func refusedValuesAreNamed(setting: Case) {
        #expect(setting.variable.hasPrefix("STACKSAMPLER_") && setting.option.hasPrefix("--"))
        for (source, given) in [(SettingSource.environment, "\(setting.variable)=\(setting.refused) is not"),
                                (.commandLine, "\(setting.option) \(setting.refused) is not")] {
            do throws(SettingError) {
                try setting.parse(setting.refused, source)
                Issue.record("\(setting.refused) was accepted")
            } catch {
                #expect(error.description.hasPrefix(given), "\(error.description)")
                #expect(error.description.contains("; use "), "\(error.description)")
            }
        }
        #expect(throws: Never.self) { try setting.parse(setting.accepted, .environment) }
    }

    @Test func theAPIChecksTheSameRanges() {
        let deep = ProfilerConfiguration(maxDepth: 4097)
        #expect(throws: ProfilerError.invalidConfiguration("max depth 4097 is not a depth; use a whole number from 1 to 4096")) {
            try deep.validated()
        }
        let small = ProfilerConfiguration(bufferSlots: 15)
        #expect(throws: ProfilerError.invalidConfiguration("buffer size 15 is not a buffer size; use a number of samples from 16 to 1048576")) {
            try small.validated()
        }
        #expect(throws: Never.self) { try ProfilerConfiguration(maxDepth: 4096, bufferSlots: 16).validated() }
    }
}
