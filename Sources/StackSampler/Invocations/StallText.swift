/// The text of one stall report: a headline naming the thread, the deepest call that has run
/// past the threshold and for how long, then the stack root first, each frame with its
/// invocation's running time; the frames past the threshold are marked with `>`. Every line
/// starts with `stacksampler:`.
enum StallText {
    /// The report of `stall` on thread `threadName` (`tid`), naming addresses with `name`.
    static func render(_ stall: Stall, threadName: String, tid: Int32, mode: SamplingMode, name: (UInt) -> String) -> String {
        let culprit = stall.culprit
        let basis = switch mode {
        case .wall: "wall-clock time"
        case .cpu: "cpu mode: only on-CPU time is sampled, so a blocked thread is reported only once it runs again"
        }
        var lines = ["stall on thread \(threadName) (tid \(tid)): \(name(culprit.address)) has run for "
                     + "\(milliseconds(culprit.runningNanoseconds)) (threshold \(milliseconds(stall.threshold)), \(basis)); stack, root first:"]
        for frame in stall.frames {
            lines.append("\(frame.runningNanoseconds > stall.threshold ? ">" : " ") \(milliseconds(frame.runningNanoseconds))  \(name(frame.address))")
        }
        return lines.map { "stacksampler: " + $0 }.joined(separator: "\n") + "\n"
    }

    private static func milliseconds(_ nanoseconds: UInt64) -> String {
        decimalText(Double(nanoseconds) / 1e6, decimals: 0) + " ms"
    }
}
