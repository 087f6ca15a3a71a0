import Glibc

/// Why the profile server cannot listen; the description says what to do.
package struct ProfileServerError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String

    /// An error with this message.
    package init(_ description: String) {
        self.description = description
    }

    /// `what` failed with `code` (an errno).
    static func system(_ what: String, _ code: Int32) -> ProfileServerError {
        ProfileServerError("\(what): \(String(cString: strerror(code)))")
    }
}
