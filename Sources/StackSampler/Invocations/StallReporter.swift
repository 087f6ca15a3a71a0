import CEngineHeader
import Glibc

/// Writes stall reports as they are made, from the sampler thread: to standard error and, when
/// configured, to a stalls file (created empty when the session starts). A stalls file whose
/// descriptor the program closed (or reused for a file of its own) is lost: reports go on to
/// standard error only, which says so once. At most `reportsPerSecond` reports are written in
/// any second (a service where every request stalls would otherwise flood its log); the next
/// report written says how many were left out. Every report written is also kept for the
/// daemon's stalls endpoint (`RecentStalls`).
final class StallReporter {
    /// Reports written at most per second.
    static let reportsPerSecond = 5
    private let mode: SamplingMode
    private let path: String?
    private let file: OwnedDescriptor?
    private var lossReported = false
    /// The second being counted (monotonic ns at its start), the reports written in it, and
    /// those left out since the last one written.
    private var secondStart: UInt64 = 0
    private var writtenThisSecond = 0
    private var suppressed = 0

    /// A reporter for `mode`; throws if the stalls file cannot be created.
    init(mode: SamplingMode, path: String?) throws(ProfilerError) {
        self.mode = mode
        self.path = path
        file = try path.map { path throws(ProfilerError) in OwnedDescriptor(try FileIO.createFresh(path, flags: O_APPEND)) }
    }

    /// Writes the report of `stall`, which happened on `thread`.
    func report(_ stall: Stall, thread: ThreadRecord, name: (UInt) -> String) {
        let now = ss_now_ns()
        if now &- secondStart >= 1_000_000_000 {
            secondStart = now
            writtenThisSecond = 0
        }
        guard writtenThisSecond < Self.reportsPerSecond else {
            suppressed += 1
            return
        }
        writtenThisSecond += 1
        var text = StallText.render(stall, threadName: thread.name, tid: thread.tid, mode: mode, name: name)
        if suppressed > 0 {
            text += "stacksampler: (\(suppressed) stall reports left out before this one: at most \(Self.reportsPerSecond) a second)\n"
            suppressed = 0
        }
        RecentStalls.add(text)
        let bytes = Array(text.utf8)
        FileIO.write(bytes, toDescriptor: STDERR_FILENO)
        if let file, let path, let failure = file.write(bytes), file.isLost, !lossReported {
            lossReported = true
            StandardError.report("stalls file \(path) lost: \(failure); stalls are reported here only from now on")
        }
    }
}
