import Foundation
import Testing
@testable import StackSampler
import StackSamplerDaemon

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

    @Test("the API refuses a depth or a buffer size out of the table's ranges in the table's words, and accepts their bounds")
    func theAPIChecksTheSameRanges() {
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

    @Test("a range is written once: the accepts check, the message and the help's words agree", arguments: [
        (SessionSettings.maxDepth, 1, 4096), (SessionSettings.bufferSize, 16, 1_048_576), (SessionSettings.maxRequestSeconds, 1, 3600),
        (SessionSettings.pushQueue, 1, 1000),
    ])
    func rangeIsOneValue(setting: Setting<Int>, lowest: Int, highest: Int) throws {
        let words = "from \(lowest) to \(highest)"
        #expect(setting.range == words)
        #expect(setting.expected.hasSuffix(words))
        #expect(throws: Never.self) { try setting.check(lowest, shown: "\(lowest)") }
        #expect(throws: Never.self) { try setting.check(highest, shown: "\(highest)") }
        #expect(throws: SettingError.self) { try setting.check(lowest - 1, shown: "\(lowest - 1)") }
        #expect(throws: SettingError.self) { try setting.check(highest + 1, shown: "\(highest + 1)") }
        let defaultValue = try #require(setting.defaultValue)
        #expect(throws: Never.self) { try setting.check(defaultValue, shown: "default") }
    }

    @Test("the period's range and default: the parser, the API and the messages take the table's")
    func periodRangeAndDefault() throws {
        let range = try #require(SessionSettings.period.range)
        #expect(range == "from 50us to 60s")
        #expect(SessionSettings.period.expected.hasSuffix(range))
        #expect(ProfilerError.invalidPeriod("1ns").description.contains(range))
        #expect(try PeriodParser.parse("50us") == .microseconds(50))
        #expect(throws: ProfilerError.invalidPeriod("49us")) { try PeriodParser.parse("49us") }
        #expect(throws: ProfilerError.invalidConfiguration("period 49us is not a sampling period; use \(SessionSettings.period.expected)")) {
            try ProfilerConfiguration(period: .microseconds(49)).validated()
        }
        #expect(SessionSettings.continuous.range == "from 100ms to 1h")
    }

    @Test("the API's defaults are the table's")
    func apiDefaults() {
        let configuration = ProfilerConfiguration()
        #expect(configuration.period == SessionSettings.period.defaultValue)
        #expect(configuration.mode == SessionSettings.mode.defaultValue)
        #expect(configuration.engine == SessionSettings.engine.defaultValue)
        #expect(configuration.eventPeriod == SessionSettings.eventPeriod.defaultValue)
        #expect(configuration.maxDepth == SessionSettings.maxDepth.defaultValue)
        #expect(configuration.bufferSlots == SessionSettings.bufferSize.defaultValue)
        #expect(configuration.asyncStacks == SessionSettings.asyncStacks.defaultValue)
        let invocations = InvocationConfiguration()
        #expect(invocations.capacity == SessionSettings.invocationCapacity.defaultValue)
        #expect(invocations.minimumSamples == SessionSettings.invocationMinSamples.defaultValue)
        #expect(PushSettings(url: "http://127.0.0.1:4040").queueLength == SessionSettings.pushQueue.defaultValue)
    }

    /// The package's root, for the C sources the tests below read.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The `STACKSAMPLER_…` words in a file of the package (macros of the C API excluded).
    static func variableNames(in path: String) throws -> [String] {
        let text = try String(contentsOfFile: packageRoot + "/" + path, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: "STACKSAMPLER_[A-Z_]+")
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) }
    }

    /// The preload's constructor runs before any Swift is loaded, so it spells the variables
    /// that decide whether a process profiles itself; they must be the table's.
    @Test("the C constructor spells the table's variables, and its daemon variables are those that start the daemon")
    func constructorNamesAreTheTables() throws {
        let source = try String(contentsOfFile: Self.packageRoot + "/Sources/StackSamplerPreload/constructor.c", encoding: .utf8)
        let daemonSettings = [SessionSettings.continuous.variable, SessionSettings.listen.variable, SessionSettings.push.variable]
        let known = Set([SessionSettings.output.variable, SessionSettings.ownerVariable] + daemonSettings)
        let names = try Self.variableNames(in: "Sources/StackSamplerPreload/constructor.c")
        #expect(!names.isEmpty)
        #expect(Set(names).isSubset(of: known), "constructor.c names \(Set(names).subtracting(known)), which the table does not")
        #expect(source.contains("output_variable[] = \"\(SessionSettings.output.variable)\";"))
        #expect(source.contains("owner_variable[] = \"\(SessionSettings.ownerVariable)\";"))
        let daemonList = daemonSettings.map { "\"\($0)\"" }.joined(separator: ", ")
        #expect(source.contains("daemon_variables[] = {\(daemonList)};"), "constructor.c's daemon_variables should be \(daemonList)")
        // Each of them alone starts the daemon, and so must make the constructor load the Swift part.
        let examples = [SessionSettings.continuous.variable: "10s", SessionSettings.listen.variable: "unix",
                        SessionSettings.push.variable: "http://127.0.0.1:4040"]
        for variable in daemonSettings {
            let settings = try DaemonSettings.fromEnvironment(SettingEnvironment([variable: try #require(examples[variable])]))
            #expect(settings.isActive, "\(variable) alone does not start the daemon")
        }
    }

    @Test("the C API's header and error message name the table's period range")
    func cAPINamesTheTablesRange() throws {
        let range = try #require(SessionSettings.period.range)
        for path in ["Sources/StackSamplerPreload/error_messages.c", "Sources/StackSamplerPreload/include/stacksampler.h"] {
            let text = try String(contentsOfFile: Self.packageRoot + "/" + path, encoding: .utf8)
            #expect(text.contains("period must be \(range)") || text.contains("period not \(range)"), "\(path) does not say \(range)")
        }
    }
}
