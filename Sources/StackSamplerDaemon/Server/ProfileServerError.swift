import Glibc

/// Why the profile server cannot listen; the description says what to do.
package struct ProfileServerError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    /// The errno of a system call that failed, if that is the cause.
    package let code: Int32?

    /// An error with this message.
    package init(_ description: String, code: Int32? = nil) {
        self.description = description
        self.code = code
    }

    /// `what` failed with `code` (an errno).
    static func system(_ what: String, _ code: Int32) -> ProfileServerError {
        ProfileServerError("\(what): \(String(cString: strerror(code)))", code: code)
    }
}
