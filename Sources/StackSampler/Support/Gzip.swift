import FileFormatLibraries

/// gzip compression through zlib (loaded privately on first use; libelf depends on it too), for
/// pprof files and OTLP request bodies.
package enum Gzip {
    /// Whether zlib can be loaded: `compress` would stop the process otherwise.
    package static var isAvailable: Bool { ss_zlib_load() != nil }

    /// `bytes` as a gzip member (RFC 1952), at zlib's fastest level, as Go's runtime/pprof writes
    /// its profiles: a window's pprof of 47 KB took 1.3 ms at the default level and 0.18 ms at
    /// this one, for 11 KB against 8 KB (a third of the daemon's work on a window went to it).
    package static func compress(_ bytes: [UInt8]) -> [UInt8] {
        guard let zlib = ss_zlib_load()?.pointee else { preconditionFailure("libz.so.1 could not be loaded: install zlib1g") }
        var stream = z_stream()
        let windowBitsWithGzipHeader: Int32 = 15 + 16
        let status = zlib.deflateInit2_(&stream, Z_BEST_SPEED, Z_DEFLATED, windowBitsWithGzipHeader, 8,
                                   Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib could not start deflating (status \(status)): out of memory")
        defer { _ = zlib.deflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        bytes.withUnsafeBufferPointer { source in
            stream.next_in = source.baseAddress.map { UnsafeMutablePointer(mutating: $0) }  // zlib only reads it
            stream.avail_in = uInt(source.count)
            var result = Z_OK
            repeat {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.next_out = target.baseAddress
                    stream.avail_out = uInt(target.count)
                    result = zlib.deflate(&stream, Z_FINISH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            } while result == Z_OK
            precondition(result == Z_STREAM_END, "zlib deflate failed with status \(result)")
        }
        return output
    }
}
