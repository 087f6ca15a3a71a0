import Glibc
import StackSampler

/// Where each window's calls go besides its profile (invocations on): the window's calls in a
/// trace format, and its calls table (JSON for a `.json` path, else text). Paths as for outputs.
package struct WindowCallFiles: Sendable {
    /// The invocations file, and its format.
    package var invocationsPath: String?
    package var invocationFormat: InvocationFormat
    /// The calls table file.
    package var callsPath: String?

    /// Files for the window's calls; nil paths write none.
    package init(invocationsPath: String?, invocationFormat: InvocationFormat, callsPath: String?) {
        self.invocationsPath = invocationsPath
        self.invocationFormat = invocationFormat
        self.callsPath = callsPath
    }

    /// Whether any file is asked for.
    package var isEmpty: Bool { invocationsPath == nil && callsPath == nil }
}

/// Continuous mode's files: each window's profile written to every output (and its calls to
/// `calls`), `%t` in a path replaced by the window's start (UTC, sortable), and only the newest
/// `keep` files of each output kept. Only files this process wrote are ever removed. Used on the window thread.
package final class WindowFiles: @unchecked Sendable {
    private let outputs: [OutputTarget]
    private let summaryPath: String?
    private let options: ExportOptions
    private let keep: Int?
    private let calls: WindowCallFiles
    /// Per output path pattern (and the summary's), the files written, oldest first.
    private var written: [String: [String]] = [:]

    /// Files for `outputs` (pid already in the paths) and the summary (`-` for stderr).
    package init(outputs: [OutputTarget], summaryPath: String?, options: ExportOptions, keep: Int?,
                 calls: WindowCallFiles = WindowCallFiles(invocationsPath: nil, invocationFormat: .chrome, callsPath: nil)) {
        self.outputs = outputs
        self.summaryPath = summaryPath
        self.options = options
        self.keep = keep
        self.calls = calls
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
        let callFiles: [(pattern: String, bytes: () -> [UInt8])] = [
            calls.invocationsPath.map { ($0, { profile.renderedInvocations(as: self.calls.invocationFormat) }) },
            calls.callsPath.map { path in (path, { Array((path.hasSuffix(".json") ? CallTable(profile).json : CallTable(profile).text()).utf8) }) },
        ].compactMap { $0 }
        for (pattern, bytes) in callFiles {
            let path = pattern.replacingStamp(with: stamp)
            do {
                try FileIO.write(bytes(), to: path)
                paths.append(path)
                rotate(pattern, adding: path, withSummarySideFile: false)
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
