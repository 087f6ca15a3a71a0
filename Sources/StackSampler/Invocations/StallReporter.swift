import Glibc

/// Writes stall reports as they are made, from the sampler thread: to standard error and, when
/// configured, to a stalls file (created empty when the session starts).
final class StallReporter {
    private let mode: SamplingMode
    private let descriptor: Int32?

    /// A reporter for `mode`; throws if the stalls file cannot be created.
    init(mode: SamplingMode, path: String?) throws(ProfilerError) {
        self.mode = mode
        guard let path else {
            descriptor = nil
            return
        }
        descriptor = try FileIO.createFresh(path, flags: O_APPEND)
    }

    deinit {
        if let descriptor { close(descriptor) }
    }

    /// Writes the report of `stall`, which happened on `thread`.
    func report(_ stall: Stall, thread: ThreadRecord, name: (UInt) -> String) {
        let bytes = Array(StallText.render(stall, threadName: thread.name, tid: thread.tid, mode: mode, name: name).utf8)
        FileIO.write(bytes, toDescriptor: STDERR_FILENO)
        if let descriptor { FileIO.write(bytes, toDescriptor: descriptor) }
    }
}
