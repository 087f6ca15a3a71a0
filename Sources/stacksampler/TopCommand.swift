import ArgumentParser
import Foundation
import StackSampler
import StackSamplerDaemon

/// `stacksampler top PID`: a live table of a running process's hottest functions, redrawn
/// every interval (like `py-spy top`), from its daemon. Ctrl-C ends it.
struct TopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Show a live, refreshing table of a running process's hottest functions (Ctrl-C to quit).",
        discussion: """
            Each refresh shows the last interval's samples: self (the function was running) and total (it was on \
            the stack) shares and counts. On a terminal the table is redrawn in place; otherwise one table is \
            printed per interval. Example: stacksampler top 1234 --mode wall --interval 2s. With --calls: the \
            functions whose calls ended in the interval, slowest p99 first, with their count, p50, p90, p99 and \
            max (the process tracks calls: STACKSAMPLER_INVOCATIONS set).
            """
    )

    @Argument(help: "The process id.")
    var pid: Int32

    @Option(help: "cpu or wall.")
    var mode = SessionSettings.mode.defaultValue!.rawValue

    @Option(help: "Time between refreshes, in whole seconds (1s, 2s…).")
    var interval = "1s"

    @Option(help: "Functions shown.")
    var rows = 25

    @Option(help: "Stop after this many refreshes (default: until Ctrl-C).")
    var iterations: Int?

    @Flag(help: "Show the slowest functions by the p99 of their calls' durations, with counts, instead of the hottest by samples.")
    var calls = false

    func validate() throws {
        _ = try SessionSettings.mode.parse(mode, from: .commandLine)
        _ = try seconds()
        guard rows >= 1 else { throw ValidationError("--rows \(rows) must be at least 1") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations \(iterations) must be at least 1") }
    }

    /// The interval in whole seconds (the daemon's spans are whole seconds).
    private func seconds() throws -> Int {
        guard let duration = try? PeriodParser.parseDuration(interval), duration >= .seconds(1),
              duration.components.attoseconds == 0 else {
            throw ValidationError("--interval \(interval) is not a whole number of seconds; use 1s, 2s, 5s…")
        }
        return Int(duration.components.seconds)
    }

    func run() throws {
        let mode = try SessionSettings.mode.parse(mode, from: .commandLine)
        let seconds = try seconds()
        let terminal = isatty(STDOUT_FILENO) == 1
        let screen = TopScreen(terminal: terminal)
        screen.begin()
        var refreshes = 0
        do {
            let connection = try DaemonConnection.find(pid: pid)
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            while iterations.map({ refreshes < $0 }) ?? true {
                if calls {
                    let bytes = try connection.get("/debug/stacksampler/calls?seconds=\(seconds)&format=json", seconds: seconds)
                    let table: TopCallsTable
                    do { table = try TopCallsTable(json: bytes) } catch {
                        throw DaemonConnection.Failure(description: "the daemon's calls table does not parse: \(error)")
                    }
                    refreshes += 1
                    let header = "stacksampler top --calls: process \(pid) (\(name)), \(table.functions.reduce(0) { $0 + $1.count }) calls "
                        + "ended in the last \(seconds)s (durations from samples every \(String(format: "%.1f", Double(table.period_ns) / 1e6)) ms)"
                    screen.draw(header + "\n\n" + table.rendered(limit: rows, width: terminal ? screen.columns : 0))
                    continue
                }
                let bytes = try connection.get(DaemonConnection.profilePath(seconds: seconds, mode: mode, format: .folded), seconds: seconds)
                let table: TopTable
                do { table = try TopTable(folded: String(decoding: bytes, as: UTF8.self)) } catch {
                    throw DaemonConnection.Failure(description: "the daemon's collapsed stacks do not parse: \(error)")
                }
                refreshes += 1
                let header = "stacksampler top: process \(pid) (\(name)), \(mode.rawValue) mode, \(table.sampleCount) samples in the last \(seconds)s"
                screen.draw(header + "\n\n" + table.rendered(limit: rows, width: terminal ? screen.columns : 0))
            }
            screen.end()
        } catch let failure as DaemonConnection.Failure {
            screen.end()
            printError(failure.description)
            throw ExitCode(1)
        }
    }
}

/// The terminal while `top` runs: on a terminal the cursor is hidden and each table replaces the
/// last (ANSI clear and home), and Ctrl-C shows the cursor again and exits with status 0;
/// elsewhere tables follow one another.
final class TopScreen {
    let terminal: Bool

    init(terminal: Bool) { self.terminal = terminal }

    /// The terminal's width (80 when unknown).
    var columns: Int {
        var size = winsize()
        return ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }

    /// Installs the Ctrl-C (and SIGTERM, SIGHUP) handling and hides the cursor.
    func begin() {
        // Only async-signal-safe calls in the handler: write the cursor back, then _exit.
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            if terminal {
                Glibc.signal(signal) { _ in
                    let restore: StaticString = "\u{1B}[?25h\n"
                    _ = write(STDOUT_FILENO, restore.utf8Start, restore.utf8CodeUnitCount)
                    _exit(0)
                }
            } else {
                Glibc.signal(signal) { _ in _exit(0) }
            }
        }
        if terminal { emit("\u{1B}[?25l") }
    }

    /// Shows `text`: in place of the last table on a terminal, else after it with a blank line.
    func draw(_ text: String) {
        emit(terminal ? "\u{1B}[H\u{1B}[2J" + text : text + "\n")
    }

    /// Shows the cursor again.
    func end() {
        if terminal { emit("\u{1B}[?25h") }
    }

    private func emit(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
