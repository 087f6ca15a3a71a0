import Glibc

/// Writes stall reports as they are made, from the sampler thread: to standard error and, when
/// configured, to a stalls file (created empty when the session starts). A stalls file whose
/// descriptor the program closed (or reused for a file of its own) is lost: reports go on to
/// standard error only, which says so once.
final class StallReporter {
    private let mode: SamplingMode
    private let path: String?
    private let file: OwnedDescriptor?
    private var lossReported = false

    /// A reporter for `mode`; throws if the stalls file cannot be created.
    init(mode: SamplingMode, path: String?) throws(ProfilerError) {
        self.mode = mode
        self.path = path
        file = try path.map { path throws(ProfilerError) in OwnedDescriptor(try FileIO.createFresh(path, flags: O_APPEND)) }
    }

    /// Writes the report of `stall`, which happened on `thread`.
    func report(_ stall: Stall, thread: ThreadRecord, name: (UInt) -> String) {
        let bytes = Array(StallText.render(stall, threadName: thread.name, tid: thread.tid, mode: mode, name: name).utf8)
        FileIO.write(bytes, toDescriptor: STDERR_FILENO)
        if let file, let path, let failure = file.write(bytes), file.isLost, !lossReported {
            lossReported = true
            StandardError.report("stalls file \(path) lost: \(failure); stalls are reported here only from now on")
        }
    }
}
