/// The per-thread root frame `[NAME tid=N]` the profiler adds with STACKSAMPLER_PER_THREAD=1.
struct ThreadRoot: Hashable, CustomStringConvertible {
    /// The thread's name.
    let name: String
    /// The thread's kernel id.
    let tid: Int

    /// Parses a `[NAME tid=N]` frame; nil for any other frame.
    init?(frame: String) {
        guard frame.hasPrefix("["), frame.hasSuffix("]"),
              let marker = frame.range(of: " tid=", options: .backwards),
              let tid = Int(frame[marker.upperBound..<frame.index(before: frame.endIndex)])
        else { return nil }
        name = String(frame[frame.index(after: frame.startIndex)..<marker.lowerBound])
        self.tid = tid
    }

    /// The frame as the profiler writes it.
    var description: String { "[\(name) tid=\(tid)]" }
}
