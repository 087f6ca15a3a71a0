import StackSampler

/// One profile rendered in several formats, in one answer (`format=pprof,folded`): so that a
/// client asking for several files gets one span, each file exactly as the daemon renders that
/// format (rendering them from collapsed stacks instead loses the mode, the period and the
/// modules: a pprof with samples/count only, period 0 and no mappings).
///
/// Framing: a line `stacksampler-bundle 1`, then for each format a line `FORMAT LENGTH` followed
/// by LENGTH bytes.
package enum ProfileBundle {
    /// The Content-Type of a bundle.
    package static let contentType = "application/x-stacksampler-bundle"
    private static let header = "stacksampler-bundle 1\n"

    /// `profile` rendered in each of `formats`.
    package static func encode(_ profile: Profile, formats: [OutputFormat]) -> [UInt8] {
        var bytes = Array(header.utf8)
        for format in formats {
            let part = profile.rendered(as: format)
            bytes += Array("\(format.rawValue) \(part.count)\n".utf8)
            bytes += part
        }
        return bytes
    }

    /// The parts of a bundle, by format; nil if `bytes` is not one.
    package static func decode(_ bytes: [UInt8]) -> [OutputFormat: [UInt8]]? {
        guard bytes.starts(with: header.utf8) else { return nil }
        var parts: [OutputFormat: [UInt8]] = [:]
        var position = header.utf8.count
        while position < bytes.count {
            guard let newline = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            let fields = String(decoding: bytes[position..<newline], as: UTF8.self).split(separator: " ")
            guard fields.count == 2, let format = OutputFormat(rawValue: String(fields[0])), let length = Int(fields[1]),
                  length >= 0, length <= bytes.count - newline - 1 else { return nil }
            parts[format] = Array(bytes[(newline + 1)..<(newline + 1 + length)])
            position = newline + 1 + length
        }
        return parts
    }
}
