import Foundation

/// One run of a test program under StackSampler, through the preload library or the CLI, and
/// the profile file it was asked to write.
struct ProfiledRun {
    /// The process that was run: the program itself (preload) or the CLI (record).
    let process: ProcessResult
    /// Where the profile was asked to go.
    let profilePath: String

    /// Whether a profile file was written.
    var wroteProfile: Bool { FileManager.default.fileExists(atPath: profilePath) }

    /// The parsed profile; throws if none was written or it does not parse.
    func profile() throws -> FoldedProfile {
        try FoldedProfile(contentsOf: profilePath)
    }

    /// Runs `program` with `LD_PRELOAD` set to the preload library and `STACKSAMPLER_OUTPUT`
    /// to a fresh file in `directory`, plus `settings` (full variable names, e.g.
    /// `STACKSAMPLER_MODE`). `profilePath` may be overridden, e.g. to test `%p`.
    static func preload(
        _ program: TestProgram, _ arguments: [String] = [], settings: [String: String] = [:],
        profilePath: String? = nil, in directory: String
    ) throws -> ProfiledRun {
        let output = profilePath ?? freshProfilePath(for: program, in: directory)
        var environment = settings
        environment["LD_PRELOAD"] = try BuildProducts.preloadLibrary()
        environment["STACKSAMPLER_OUTPUT"] = output
        let process = try ChildProcess.run(try program.executable(), arguments, environment: environment, in: directory)
        return ProfiledRun(process: process, profilePath: output)
    }

    /// Runs `stacksampler record OPTIONS -o FILE -- PROGRAM ARGUMENTS`, FILE a fresh file in `directory`.
    static func record(
        _ program: TestProgram, _ arguments: [String] = [], options: [String] = [], in directory: String
    ) throws -> ProfiledRun {
        let output = freshProfilePath(for: program, in: directory)
        let command = ["record"] + options + ["-o", output, "--", try program.executable()] + arguments
        let process = try ChildProcess.run(try BuildProducts.cli(), command, in: directory)
        return ProfiledRun(process: process, profilePath: output)
    }

    /// A profile path in `directory` that no other run uses.
    static func freshProfilePath(for program: TestProgram, in directory: String) -> String {
        directory + "/\(program.rawValue)-\(UUID().uuidString.prefix(8)).folded"
    }
}
