import Foundation

/// Temporary directories of one test run: `$TMPDIR/stacksampler-e2e/<runner pid>/`, holding
/// the compiled programs (`bin/`) and one directory per test for its profiles and outputs.
///
/// They are kept after the run, so a failure can be looked into; a later run removes the
/// directories of runs whose process is gone.
enum ScratchDirectory {
    /// This run's root directory, created (and stale runs' removed) on first use.
    static let run: String = {
        let parent = FileManager.default.temporaryDirectory.path + "/stacksampler-e2e"
        removeStaleRuns(in: parent)
        let path = parent + "/\(getpid())"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// A new, empty directory for one test, named after `label`.
    static func make(_ label: String) throws -> String {
        let path = run + "/" + label + "-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes the directories under `parent` of earlier runs whose runner process has ended.
    private static func removeStaleRuns(in parent: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        for entry in entries {
            guard let pid = pid_t(entry), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: parent + "/" + entry)
        }
    }
}
