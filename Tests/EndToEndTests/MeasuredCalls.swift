/// The ground truth the invocations program prints: `call NAME MILLISECONDS` per call, in call order.
struct MeasuredCalls {
    /// Durations in milliseconds by function name, in call order.
    let durations: [String: [Double]]

    /// Collects the `call` lines of `output`; throws if there are none.
    init(parsing output: String) throws {
        var durations: [String: [Double]] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3, fields[0] == "call", let milliseconds = Double(fields[2]) {
                durations[String(fields[1]), default: []].append(milliseconds)
            }
        }
        guard !durations.isEmpty else { throw HarnessError("no `call NAME MS` lines in the program's output:\n\(output)") }
        self.durations = durations
    }
}
