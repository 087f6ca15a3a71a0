import FileFormatLibraries

/// xz (LZMA2) decompression and the CRC-32 of liblzma, loaded privately on first use.
enum XZ {
    /// Decompresses a complete `.xz` stream; nil if it is corrupt or would exceed `limit` bytes,
    /// or liblzma is missing.
    static func decompress(_ input: UnsafeRawBufferPointer, limit: Int = 1 << 30) -> [UInt8]? {
        guard let lzma = ss_liblzma_load()?.pointee else { return nil }
        var stream = lzma_stream()  // All zero: LZMA_STREAM_INIT.
        guard lzma.lzma_stream_decoder(&stream, UInt64.max, 0) == LZMA_OK else { return nil }
        defer { lzma.lzma_end(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = input.count
        while true {
            let (result, produced) = chunk.withUnsafeMutableBufferPointer { buffer -> (lzma_ret, Int) in
                stream.next_out = buffer.baseAddress
                stream.avail_out = buffer.count
                let result = lzma.lzma_code(&stream, LZMA_FINISH)
                return (result, buffer.count - stream.avail_out)
            }
            output.append(contentsOf: chunk[0..<produced])
            guard output.count <= limit else { return nil }
            if result == LZMA_STREAM_END { return output }
            guard result == LZMA_OK else { return nil }
        }
    }

    /// The CRC-32 (ISO 3309, as zlib's and `.gnu_debuglink`'s) of `bytes`, continuing from `crc`;
    /// nil if liblzma is missing.
    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32? {
        ss_liblzma_load()?.pointee.lzma_crc32(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, crc)
    }
}
