/// A failure of the end-to-end harness itself (missing build, compile error, timeout), with a
/// message meant to be read in a test report.
struct HarnessError: Error, CustomStringConvertible {
    /// What went wrong and, where possible, what to do about it.
    let description: String

    /// An error carrying `description` as its message.
    init(_ description: String) {
        self.description = description
    }
}
