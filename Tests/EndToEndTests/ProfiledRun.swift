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
    /// In `setting` (root by default), the program runs as that user, with the products copied
    /// where it can read them.
    static func preload(
        _ program: TestProgram, _ arguments: [String] = [], settings: [String: String] = [:],
        profilePath: String? = nil, setting: RunSetting = .root, in directory: String
    ) throws -> ProfiledRun {
        let output = profilePath ?? freshProfilePath(for: program, in: directory)
        var environment = settings
        environment["LD_PRELOAD"] = try setting.preloadLibrary()
        environment["STACKSAMPLER_OUTPUT"] = output
        setting.prepare(directory)
        let (command, childEnvironment) = try setting.command([try program.executable()] + arguments, environment: environment)
        let process = try ChildProcess.run(command[0], Array(command.dropFirst()), environment: childEnvironment, in: directory)
        return ProfiledRun(process: process, profilePath: output)
    }

    /// Runs `stacksampler record OPTIONS -o FILE -- PROGRAM ARGUMENTS`, FILE a fresh file in `directory`.
    static func record(
        _ program: TestProgram, _ arguments: [String] = [], options: [String] = [], setting: RunSetting = .root, in directory: String
    ) throws -> ProfiledRun {
        let output = freshProfilePath(for: program, in: directory)
        let cli = setting == .root ? try BuildProducts.cli() : try BuildProducts.readableByAll() + "/stacksampler"
        setting.prepare(directory)
        let (command, environment) = try setting.command([cli, "record"] + options + ["-o", output, "--", try program.executable()] + arguments,
                                                         environment: [:])
        let process = try ChildProcess.run(command[0], Array(command.dropFirst()), environment: environment, in: directory)
        return ProfiledRun(process: process, profilePath: output)
    }

    /// A profile path in `directory` that no other run uses.
    static func freshProfilePath(for program: TestProgram, in directory: String) -> String {
        directory + "/\(program.rawValue)-\(UUID().uuidString.prefix(8)).folded"
    }
}
