import Glibc
import StackSampler

/// Continuous mode's files: each window's profile written to every output, `%t` in a path
/// replaced by the window's start (UTC, sortable), and only the newest `keep` files of each
/// output kept. Only files this process wrote are ever removed. Used on the window thread.
package final class WindowFiles: @unchecked Sendable {
    private let outputs: [OutputTarget]
    private let summaryPath: String?
    private let options: ExportOptions
    private let keep: Int?
    /// Per output path pattern (and the summary's), the files written, oldest first.
    private var written: [String: [String]] = [:]

    /// Files for `outputs` (pid already in the paths) and the summary (`-` for stderr).
    package init(outputs: [OutputTarget], summaryPath: String?, options: ExportOptions, keep: Int?) {
        self.outputs = outputs
        self.summaryPath = summaryPath
        self.options = options
        self.keep = keep
    }

    /// Writes `profile` (one window) everywhere; returns the paths written and the errors met.
    @discardableResult
    package func write(_ profile: Profile) -> (written: [String], errors: [String]) {
        let stamp = sortableUTCStamp(nanosecondsSinceEpoch: profile.realtimeStartNanoseconds)
        var paths: [String] = []
        var errors: [String] = []
        for output in outputs {
            let path = output.path.replacingStamp(with: stamp)
            do {
                try profile.write(to: path, format: output.format, options: options)
                paths.append(path)
                rotate(output.path, adding: path, withSummarySideFile: output.format == .folded)
            } catch {
                errors.append("\(error)")
            }
        }
        guard !paths.isEmpty, let summaryPath else { return (paths, errors) }
        let text = profile.summary + "stacksampler: wrote \(paths.joined(separator: ", "))\n"
        if summaryPath == "-" {
            StandardError.write(text)
        } else {
            let path = summaryPath.replacingStamp(with: stamp)
            do {
                try FileIO.write(Array(text.utf8), to: path)
                rotate(summaryPath, adding: path, withSummarySideFile: false)
            } catch {
                errors.append("cannot write the summary: \(error)")
            }
        }
        return (paths, errors)
    }

    /// Notes `path` as written for `pattern`, and removes the oldest files beyond `keep` (only
    /// when the pattern rotates: without `%t` each window replaces the file).
    private func rotate(_ pattern: String, adding path: String, withSummarySideFile: Bool) {
        guard DaemonSettings.rotates(pattern) else { return }
        var files = written[pattern, default: []]
        if files.last != path { files.append(path) }
        while let keep, files.count > keep {
            let oldest = files.removeFirst()
            unlink(oldest)
            if withSummarySideFile { unlink(oldest + ".summary") }
        }
        written[pattern] = files
    }
}

extension String {
    /// The path with every `%t` replaced by `stamp`.
    func replacingStamp(with stamp: String) -> String {
        var result = ""
        var rest = self[...]
        while let percent = rest.firstIndex(of: "%") {
            let next = rest.index(after: percent)
            result += rest[..<percent]
            if next < rest.endIndex, rest[next] == "t" {
                result += stamp
                rest = rest[rest.index(after: next)...]
            } else {
                result += "%"
                rest = rest[next...]
            }
        }
        return result + rest
    }
}
