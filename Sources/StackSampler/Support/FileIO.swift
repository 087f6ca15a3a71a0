import CEngineHeader
import Glibc

/// Small file reads and writes over the C library (this module does not use Foundation).
package enum FileIO {
    /// This process's name, as `/proc/self/comm` gives it (empty if unreadable).
    package static var processName: String {
        readText("/proc/self/comm", limit: 64).map { $0.hasSuffix("\n") ? String($0.dropLast()) : $0 } ?? ""
    }

    /// The whole content of a small file (for example under /proc), or nil (errno set) if it cannot be read.
    package static func readText(_ path: String, limit: Int = 1 << 22) -> String? {
        readBytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A /proc file of at most `limit` bytes, in one read: the kernel hands a whole small
    /// /proc file over in the first read, so the read that would find its end is left out
    /// (the sampler thread reads these on every tick). Nil if it cannot be read.
    /// Opened for a moment, and read at its start (`ss_borrowed_open`: the program may close
    /// and reuse the number meanwhile).
    package static func readProcText(_ path: String, limit: Int) -> String? {
        var identity = ss_file_identity()
        let descriptor = ss_borrowed_open(path, 0, &identity)
        guard descriptor >= 0 else { return nil }
        defer { ss_borrowed_close(descriptor, &identity) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var count: Int
        repeat {
            count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        } while count < 0 && errno == EINTR
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    /// The bytes of a file, up to `limit`, or nil (errno set) if it cannot be read. Plain
    /// `read(2)` to the end: procfs files, whose size is given as 0, are read whole.
    static func readBytes(_ path: String, limit: Int = 1 << 30) -> [UInt8]? {
        var bytes: [UInt8] = []
        // Chunks sized to the limit: the sampler thread reads small /proc files on every tick.
        let whole = readChunks(of: path, chunkSize: min(limit, 65536), limit: limit) { chunk in
            bytes.append(contentsOf: chunk)
            return true
        }
        return whole ? bytes : nil
    }

    /// Reads the file at `path` from its start, at most `chunkSize` bytes a `read(2)` (read
    /// again when a signal interrupts it) and `limit` bytes in all, handing each chunk to `body`
    /// until the end of the file, the limit, or `body` returning false. False (errno set) when
    /// the file cannot be opened or a read fails; true otherwise, `body` having stopped it or not.
    /// Read by position, and closed only if still the file opened (`ss_borrowed_open`).
    static func readChunks(of path: String, chunkSize: Int, limit: Int = .max,
                           _ body: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        var identity = ss_file_identity()
        let descriptor = ss_borrowed_open(path, 0, &identity)
        guard descriptor >= 0 else { return false }
        defer { ss_borrowed_close(descriptor, &identity) }
        var chunk = [UInt8](repeating: 0, count: max(1, chunkSize))
        var total = 0
        var positional = true // a pipe or FIFO (a credentials file given as one) is read in sequence
        while total < limit {
            let wanted = min(chunk.count, limit - total)
            let count = chunk.withUnsafeMutableBytes {
                positional ? pread(descriptor, $0.baseAddress, wanted, off_t(total)) : read(descriptor, $0.baseAddress, wanted)
            }
            if count < 0 && errno == ESPIPE && positional {
                positional = false
                continue
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 }
            total += count
            guard chunk.withUnsafeBytes({ body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }) else { return true }
        }
        return true
    }

    /// Writes `bytes` to `path`, replacing it. The bytes go to a new file beside it, which is
    /// then renamed over `path`: a symlink named `path` is replaced, never followed, and a
    /// reader never sees half a file. The new file's mode is 0644 less the umask.
    package static func write(_ bytes: [UInt8], to path: String) throws(ProfilerError) {
        if let device = try openIfNotRegular(path) {
            defer { close(device) }
            if let failure = write(bytes, toDescriptor: device) { throw .outputFailed(path: path, reason: failure) }
            return
        }
        let (descriptor, temporary) = try createBeside(path)
        let failure = write(bytes, toDescriptor: descriptor)
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw .outputFailed(path: path, reason: failure)
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw .outputFailed(path: path, reason: reason)
        }
    }

    /// A file of its own for a stream written while the program runs: whatever is named `path`
    /// (a file of an earlier run, a symlink) is unlinked, and a new file is created there with
    /// O_EXCL and O_NOFOLLOW, so nothing that appears in between is followed either.
    static func createFresh(_ path: String, flags: Int32 = 0) throws(ProfilerError) -> Int32 {
        if let device = try openIfNotRegular(path, flags: flags) { return device }
        for _ in 0..<3 {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0o644)
            if descriptor >= 0 { return descriptor }
            guard errno == EEXIST, unlink(path) == 0 || errno == ENOENT else { break }
        }
        throw .outputFailed(path: path, reason: String(cString: strerror(errno)))
    }

    /// `path` opened for writing in place when it names, through any symlinks, something that
    /// exists and is not a regular file (`/dev/null`, `/dev/stdout`, a pipe): replacing that
    /// would be wrong, and writing to it truncates nothing. Nil for anything else; throws if
    /// such a thing cannot be opened.
    private static func openIfNotRegular(_ path: String, flags: Int32 = 0) throws(ProfilerError) -> Int32? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG else { return nil }
        let descriptor = open(path, O_WRONLY | O_CLOEXEC | flags)
        guard descriptor >= 0 else { throw .outputFailed(path: path, reason: String(cString: strerror(errno))) }
        // Checked again on what was opened: the name may have changed since.
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFREG else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// A new file in the directory of `path`, named after it, opened for writing, and its name.
    private static func createBeside(_ path: String) throws(ProfilerError) -> (Int32, String) {
        var attempt = 0
        while true {
            let temporary = "\(path).\(getpid())-\(attempt).tmp"
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            if descriptor >= 0 { return (descriptor, temporary) }
            attempt += 1
            guard errno == EEXIST, attempt < 100 else {
                throw .outputFailed(path: path, reason: String(cString: strerror(errno)))
            }
        }
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

    /// Entries of a directory, without `.` and `..` (opened for a moment: `ss_borrowed_open`).
    static func directoryEntries(_ path: String) -> [String] {
        var identity = ss_file_identity()
        let descriptor = ss_borrowed_open(path, O_DIRECTORY, &identity)
        guard descriptor >= 0 else { return [] }
        defer { ss_borrowed_close(descriptor, &identity) }
        var names: [String] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = buffer.withUnsafeMutableBytes { ss_borrowed_read_directory(descriptor, &identity, $0.baseAddress, $0.count) }
            guard count > 0 else { return names }
            // linux_dirent64: inode (8 bytes), offset (8), record length (2), type (1), name.
            var offset = 0
            while offset + 19 < count {
                let length = Int(buffer[offset + 16]) | Int(buffer[offset + 17]) << 8
                guard length > 0 else { return names }
                let nameBytes = buffer[(offset + 19)..<(offset + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                if name != "." && name != ".." { names.append(name) }
                offset += length
            }
        }
    }
}
