import Glibc

/// The process's standard error, written without Foundation and without buffering.
package enum StandardError {
    /// Writes `text` whole (or as much as the descriptor takes).
    package static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Writes one line `stacksampler: MESSAGE`.
    package static func report(_ message: String) {
        write("stacksampler: \(message)\n")
    }
}
