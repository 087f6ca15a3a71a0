import Glibc

/// Small file reads and writes over the C library (this module does not use Foundation).
enum FileIO {
    /// The whole content of a small file (for example under /proc), or nil if it cannot be read.
    static func readText(_ path: String, limit: Int = 1 << 22) -> String? {
        readBytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A /proc file of at most `limit` bytes, in one read: the kernel hands a whole small
    /// /proc file over in the first read, so the read that would find its end is left out
    /// (the sampler thread reads these on every tick). Nil if it cannot be read.
    static func readProcText(_ path: String, limit: Int) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The bytes of a file, up to `limit`, or nil if it cannot be read.
    static func readBytes(_ path: String, limit: Int = 1 << 30) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        // Sized to the limit: the sampler thread reads small /proc files on every tick.
        var chunk = [UInt8](repeating: 0, count: min(limit, 65536))
        while bytes.count < limit {
            let wanted = min(chunk.count, limit - bytes.count)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, wanted) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Writes `bytes` to `path`, replacing it.
    static func write(_ bytes: [UInt8], to path: String) throws(ProfilerError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .outputFailed(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        if let failure = write(bytes, toDescriptor: descriptor) { throw .outputFailed(path: path, reason: failure) }
    }

    /// Writes all of `bytes` to an open file; nil on success, else why it failed.
    @discardableResult
    static func write(_ bytes: [UInt8], toDescriptor descriptor: Int32) -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += written
        }
        return nil
    }

    /// Entries of a directory, without `.` and `..`.
    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
