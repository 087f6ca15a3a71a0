import Foundation
import Testing

extension EndToEnd {
    /// Every front end takes a setting's default and range from the one table (`SessionSettings`):
    /// `record`'s help shows them, and the CLI, the preload library and the C API say the same
    /// range when refusing a period, and the preload samples at the default the help shows.
    @Suite struct SettingsFrontEnds {
        /// `text` with every run of white space made one space (the help is wrapped to the terminal).
        static func oneLine(_ text: String) -> String {
            text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        }

        /// The first capture of `pattern` in `text`.
        static func capture(_ pattern: String, in text: String) throws -> String? {
            let expression = try NSRegularExpression(pattern: pattern)
            guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                  let range = Range(match.range(at: 1), in: text) else { return nil }
            return String(text[range])
        }

        @Test("the CLI help, the CLI's, the preload's and the C API's errors name one period range; the preload samples at the help's default")
        func periodRangeAndDefault() throws {
            let directory = try ScratchDirectory.make("settings-front-ends")
            let help = try ChildProcess.run(try BuildProducts.cli(), ["help", "record"], in: directory)
            #expect(help.termination == .exited(0), "\(help)")
            let periodHelp = try #require(try Self.capture("--period <period> (.*?) --engine", in: Self.oneLine(help.stdout)),
                                          "no --period in the help: \(help)")
            let range = try #require(try Self.capture("\\((from \\S+ to \\S+)\\)", in: periodHelp), "the --period help names no range: \(periodHelp)")
            let defaultPeriod = try #require(try Self.capture("\\(default: (\\S+)\\)", in: periodHelp), "the --period help names no default: \(periodHelp)")

            let program = try TestProgram.exitStatus.executable()
            let cli = try ChildProcess.run(try BuildProducts.cli(), ["record", "--period", "1ns", "-o", directory + "/cli.folded", "--", program],
                                           in: directory)
            #expect(cli.termination != .exited(0) && Self.oneLine(cli.stderr).contains(range), "the CLI's error should say \(range): \(cli)")

            let refused = try ProfiledRun.preload(.exitStatus, settings: ["STACKSAMPLER_PERIOD": "1ns"], in: directory)
            #expect(refused.process.stderrLines.contains { $0.contains("STACKSAMPLER_PERIOD=1ns") && $0.contains(range) },
                    "the preload's error should say \(range): \(refused.process)")

            let capi = try ChildProcess.run(try TestProgram.cAPI.executable(), [directory + "/c.folded", directory + "/c.pb.gz"], in: directory)
            let message = try #require(try Self.capture("invalid_argument_message (.*)", in: capi.stdout), "\(capi)")
            #expect(message.contains("period must be \(range)"), "the C API's message should say \(range): \(message)")

            let unset = try ProfiledRun.preload(.exitStatus, settings: ["STACKSAMPLER_SUMMARY": "-"], in: directory)
            #expect(unset.process.stderr.contains("mode, period \(defaultPeriod),"), "the preload's summary should say period \(defaultPeriod): \(unset.process)")
            // An exported but empty variable is unset: the default, not an error.
            let empty = try ProfiledRun.preload(.exitStatus, settings: ["STACKSAMPLER_SUMMARY": "-", "STACKSAMPLER_PERIOD": ""], in: directory)
            #expect(empty.wroteProfile && empty.process.stderr.contains("mode, period \(defaultPeriod),"),
                    "an empty STACKSAMPLER_PERIOD should sample at \(defaultPeriod): \(empty.process)")
        }

        @Test("record's help shows each sampling option's default and range")
        func helpShowsDefaultsAndRanges() throws {
            let directory = try ScratchDirectory.make("settings-help")
            let help = Self.oneLine(try ChildProcess.run(try BuildProducts.cli(), ["help", "record"], in: directory).stdout)
            for (option, next) in [("--max-depth <max-depth>", "--buffer-size"), ("--buffer-size <buffer-size>", "--follow-children")] {
                let text = try #require(try Self.capture("\(option) (.*?) \(next)", in: help), "no \(option) in the help: \(help)")
                #expect(try Self.capture("\\((from \\d+ to \\d+)\\)", in: text) != nil, "\(option) names no range: \(text)")
                #expect(try Self.capture("\\(default: (\\d+)\\)", in: text) != nil, "\(option) names no default: \(text)")
            }
        }
    }
}
