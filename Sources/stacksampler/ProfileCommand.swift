import ArgumentParser
import Foundation
import StackSampler
import StackSamplerDaemon

/// `stacksampler profile PID --seconds 10 -o out.svg`: the profile of the next seconds of a
/// running process, from its daemon (started with the preload library).
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Fetch the profile of the next seconds from a running process started with the preload library.",
        discussion: """
            The process is reached at its STACKSAMPLER_LISTEN address (unix:PATH or HOST:PORT), else at its \
            default socket /tmp/stacksampler-UID/PID.sock. \
            Start it with e.g. LD_PRELOAD=/path/to/libStackSamplerPreload.so STACKSAMPLER_LISTEN=unix ./service
            Example: stacksampler profile 1234 --seconds 10 -o service.svg
            """
    )

    @Argument(help: "The process id.")
    var pid: Int32

    @Option(help: "How long to sample, in whole seconds.")
    var seconds = 10

    @Option(help: "cpu or wall.")
    var mode = SessionSettings.mode.defaultValue!.rawValue

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard seconds >= 1 else { throw ValidationError("--seconds \(seconds) must be at least 1") }
        _ = try SessionSettings.mode.parse(mode, from: .commandLine)
    }

    func run() throws {
        let mode = try SessionSettings.mode.parse(mode, from: .commandLine)
        let targets = output.targets(fallback: ["stacksampler.folded"])
        do {
            let connection = try DaemonConnection.find(pid: pid)
            // Each file exactly as the daemon renders its format; several formats: one span, in one bundle.
            var formats: [OutputFormat] = []
            for target in targets where !formats.contains(target.format) { formats.append(target.format) }
            let bytes = try connection.get(DaemonConnection.profilePath(seconds: seconds, mode: mode, formats: formats), seconds: seconds)
            let parts = formats.count == 1 ? [formats[0]: bytes] : ProfileBundle.decode(bytes)
            guard let parts else {
                throw DaemonConnection.Failure(description: "process \(pid)'s daemon did not answer with one profile in each format (an older StackSampler?); ask for one format at a time")
            }
            for target in targets {
                guard let part = parts[target.format] else {
                    throw DaemonConnection.Failure(description: "process \(pid)'s daemon sent no \(target.format.rawValue) profile")
                }
                try write(part, to: target)
            }
        } catch let failure as DaemonConnection.Failure {
            printError(failure.description)
            throw ExitCode(1)
        }
    }

    private func write(_ bytes: [UInt8], to target: OutputTarget) throws {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: target.path))
        } catch {
            printError("cannot write \(target.path): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        printError("wrote \(target.path) (\(target.format.rawValue), \(bytes.count) bytes)")
    }
}
