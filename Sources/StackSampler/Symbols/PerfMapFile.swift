import Glibc

/// Reads a perf map file (`/tmp/perf-PID.map`, see `PerfMap`) as it grows: each `update` parses
/// only the whole lines appended since the one before (under node the file grows without end,
/// and names are looked up again at every window). It starts over, from an empty map, when the
/// file is no longer the one read (replaced, or not there), is shorter than what was read
/// (truncated), or no longer ends what was read with the same bytes (truncated and written
/// again past that length). Only a regular file owned by this user is read (anyone may write
/// into /tmp); otherwise the map is empty.
struct PerfMapFile: Sendable {
    /// The file read.
    let path: String
    /// The file read so far (device, inode); nil before the first read.
    private var identity: (device: UInt, inode: UInt)?
    /// Bytes read and parsed: whole lines. A line still being written is read once it ends.
    private(set) var offset = 0
    /// The last bytes before `offset`, to tell the file read from one written again.
    private var tail: [UInt8] = []
    /// How many bytes of the end of what was read are checked.
    private static let tailLength = 64

    /// The perf map process `pid` writes.
    init(pid: Int32) {
        self.init(path: "/tmp/perf-\(pid).map")
    }

    /// The perf map at `path`.
    init(path: String) {
        self.path = path
    }

    /// Adds to `map` the lines appended since the last update (`map` is the map those updates
    /// made); starts `map` over from the file's start, or empty, as the type's description says.
    mutating func update(_ map: inout PerfMap) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return startOver(&map) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid() else { return startOver(&map) }
        let current = (device: UInt(status.st_dev), inode: UInt(status.st_ino))
        if identity.map({ $0 != current }) ?? true || Int(status.st_size) < offset || !endsWithTail(fd) {
            startOver(&map)
            identity = current
        }
        let appended = readToEnd(fd, from: offset)
        guard let lastNewline = appended.lastIndex(of: UInt8(ascii: "\n")) else { return }
        let lines = appended[...lastNewline]
        map.append(lines)
        offset += lines.count
        tail = Array((tail + lines.suffix(Self.tailLength)).suffix(Self.tailLength))
    }

    /// Forgets what was read: the next read starts at the file's start.
    private mutating func startOver(_ map: inout PerfMap) {
        map = PerfMap()
        identity = nil
        offset = 0
        tail = []
    }

    /// Whether the bytes before `offset` are still `tail`.
    private func endsWithTail(_ fd: Int32) -> Bool {
        guard !tail.isEmpty else { return true }
        var bytes = [UInt8](repeating: 0, count: tail.count)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset - tail.count)) }
        return count == tail.count && bytes == tail
    }

    /// The file's bytes from `start` to its end.
    private func readToEnd(_ fd: Int32, from start: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var position = start
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(position)) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += chunk[..<count]
            position += count
        }
        return bytes
    }
}
