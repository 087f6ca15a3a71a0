import Foundation
import Testing

extension EndToEnd {
    /// Bad settings: the preload library says so and stays out of the way; the CLI refuses.
    @Suite struct ConfigurationErrors {
        /// A bad value for one preload variable.
        struct BadSetting: Sendable, CustomTestStringConvertible {
            /// The variable, e.g. `STACKSAMPLER_PERIOD`.
            let variable: String
            /// Its bad value.
            let value: String
            /// `STACKSAMPLER_PERIOD=10parsecs`.
            var testDescription: String { "\(variable)=\(value)" }
        }

        /// A `stacksampler` command line that is a usage error.
        struct BadInvocation: Sendable, CustomTestStringConvertible {
            /// What is wrong with it.
            let testDescription: String
            /// The arguments after `stacksampler`, given the profile path and a program to run.
            let arguments: @Sendable (_ profilePath: String, _ program: String) -> [String]
            /// Words of which the error message must contain at least one (case-insensitive).
            let mentions: [String]
        }

        /// The preload variables' bad values under test.
        static let badSettings = [
            BadSetting(variable: "STACKSAMPLER_PERIOD", value: "10parsecs"),
            BadSetting(variable: "STACKSAMPLER_MODE", value: "sideways"),
            BadSetting(variable: "STACKSAMPLER_INVOCATION_FORMAT", value: "pdf"),
            BadSetting(variable: "STACKSAMPLER_STALL_THRESHOLD", value: "soon"),
            BadSetting(variable: "STACKSAMPLER_FORMAT", value: "jpeg"),
        ]

        /// The CLI usage errors under test.
        static let badInvocations = [
            BadInvocation(testDescription: "bad period", arguments: { ["record", "--period", "10parsecs", "-o", $0, "--", $1, "0"] },
                          mentions: ["period"]),
            BadInvocation(testDescription: "bad mode", arguments: { ["record", "--mode", "sideways", "-o", $0, "--", $1, "0"] },
                          mentions: ["mode"]),
            BadInvocation(testDescription: "bad format", arguments: { ["record", "--format", "jpeg", "-o", $0, "--", $1, "0"] },
                          mentions: ["format"]),
            BadInvocation(testDescription: "comma in an output path", arguments: { ["record", "-o", $0 + ",x.svg", "--", $1, "0"] },
                          mentions: ["comma"]),
            BadInvocation(testDescription: "missing command", arguments: { profile, _ in ["record", "-o", profile] },
                          mentions: ["command", "missing"]),
            BadInvocation(testDescription: "command not found",
                          arguments: { profile, _ in ["record", "-o", profile, "--", "/nonexistent/stacksampler-no-such-program"] },
                          mentions: ["stacksampler-no-such-program"]),
        ]

        /// The preload library names the variable in one stderr line, writes no profile, and the
        /// program runs to its normal end with its own exit status.
        @Test("preload: bad value is reported and the program runs unprofiled", arguments: badSettings)
        func preload(_ setting: BadSetting) throws {
            let directory = try ScratchDirectory.make("bad-setting")
            let run = try ProfiledRun.preload(.exitStatus, ["5"], settings: [setting.variable: setting.value], in: directory)
            #expect(run.process.termination == .exited(5), "\(run.process)")
            #expect(run.process.stdout.contains("exit_status 5"), "the program did not run to its end: \(run.process)")
            let naming = run.process.stderrLines.filter { $0.contains(setting.variable) }
            #expect(naming.count == 1, "expected one stderr line naming \(setting.variable): \(run.process)")
            #expect(!run.wroteProfile, "a profile was written to \(run.profilePath) despite the bad setting")
        }

        /// The CLI exits non-zero with a message naming the problem, without running the command.
        @Test("CLI: usage error exits non-zero with a message", arguments: badInvocations)
        func cli(_ invocation: BadInvocation) throws {
            let directory = try ScratchDirectory.make("bad-invocation")
            let profile = ProfiledRun.freshProfilePath(for: .exitStatus, in: directory)
            let result = try ChildProcess.run(
                try BuildProducts.cli(), invocation.arguments(profile, try TestProgram.exitStatus.executable()), in: directory)
            #expect(result.termination != .exited(0), "\(result)")
            if case .signaled = result.termination { Issue.record("the CLI was killed by a signal: \(result)") }
            let message = result.stderr.lowercased()
            #expect(invocation.mentions.contains { message.contains($0.lowercased()) },
                    "stderr should mention one of \(invocation.mentions): \(result)")
            #expect(!result.stdout.contains("exit_status"), "the command ran despite the usage error: \(result)")
        }
    }
}
