/// The ground truth a self-measuring program prints: `measured NAME SHARE` lines, SHARE being
/// the fraction of its measured CPU time spent in function NAME.
struct MeasuredShares {
    /// Share by function name.
    let shares: [String: Double]

    /// Collects the `measured` lines of `output`; throws if there are none.
    init(parsing output: String) throws {
        var shares: [String: Double] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 3, fields[0] == "measured", let share = Double(fields[2]) {
                shares[String(fields[1])] = share
            }
        }
        guard !shares.isEmpty else {
            throw HarnessError("no `measured NAME SHARE` lines in the program's output:\n\(output)")
        }
        self.shares = shares
    }
}
