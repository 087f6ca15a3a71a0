/// Reads `KEY VALUE` lines that the test programs print (`ticks 98`, `threads 8`).
enum ProgramOutput {
    /// The integer after `key` on the first line of `output` that starts with it, if any.
    static func integer(_ key: String, in output: String) -> Int? {
        value(key, in: output).flatMap { Int($0) }
    }

    /// The number after `key` (`busy_life_ms 412.5`) on the first line that starts with it, if any.
    static func number(_ key: String, in output: String) -> Double? {
        value(key, in: output).flatMap { Double($0) }
    }

    private static func value(_ key: String, in output: String) -> Substring? {
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, fields[0] == key { return fields[1] }
        }
        return nil
    }
}
