import Glibc

/// Why the profile server cannot listen; the description says what to do.
public struct ProfileServerError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    /// An error with this message.
    public init(_ description: String) {
        self.description = description
    }

    /// `what` failed with `code` (an errno).
    static func system(_ what: String, _ code: Int32) -> ProfileServerError {
        ProfileServerError("\(what): \(String(cString: strerror(code)))")
    }
}
