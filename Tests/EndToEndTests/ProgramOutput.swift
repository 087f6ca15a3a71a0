/// Reads `KEY VALUE` lines that the test programs print (`ticks 98`, `threads 8`).
enum ProgramOutput {
    /// The integer after `key` on the first line of `output` that starts with it, if any.
    static func integer(_ key: String, in output: String) -> Int? {
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == key { return Int(fields[1]) }
        }
        return nil
    }
}
