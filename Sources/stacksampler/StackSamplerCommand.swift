import ArgumentParser
import Foundation

/// `stacksampler`: records profiles of Linux programs with the preload library.
@main
struct StackSamplerCommand {
    /// The subcommands, parsed by swift-argument-parser.
    struct Root: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stacksampler",
            abstract: "A sampling profiler for Linux programs: record one, get flame graphs, pprof or speedscope profiles.",
            subcommands: [RecordCommand.self, ReportCommand.self, DiffCommand.self, ProfileCommand.self, TopCommand.self]
        )
    }

    /// Parses and runs; usage errors print one line and exit non-zero, help prints as usual.
    static func main() {
        do {
            var command = try Root.parseAsRoot()
            try command.run()
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = Root.exitCode(for: error)
            guard code != .success else { Root.exit(withError: error) }
            let message = Root.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            let subcommand = CommandLine.arguments.dropFirst().first.flatMap { name in
                Root.configuration.subcommands.contains { $0.configuration.commandName == name } ? " " + name : nil
            } ?? ""
            FileHandle.standardError.write(Data("stacksampler: \(message) (see 'stacksampler help\(subcommand)')\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
