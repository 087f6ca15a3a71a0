import CZlib

/// The bytes a gzip stream holds, inflated by zlib (a reader independent of the profiler's own).
package func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
    var stream = z_stream()
    guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
        throw DecodeFailure(description: "inflateInit2 failed")
    }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var input = bytes
    var status = Z_OK
    input.withUnsafeMutableBufferPointer { source in
        stream.next_in = source.baseAddress
        stream.avail_in = uInt(source.count)
        repeat {
            chunk.withUnsafeMutableBufferPointer { target in
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                status = inflate(&stream, Z_NO_FLUSH)
            }
            output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
        } while status == Z_OK
    }
    guard status == Z_STREAM_END else { throw DecodeFailure(description: "not a complete gzip stream (zlib status \(status))") }
    return output
}
