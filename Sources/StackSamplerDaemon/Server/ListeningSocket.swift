import Glibc

/// A listening socket the server serves: bound, listening, close-on-exec and non-blocking.
/// A unix socket's file is removed by `removeFile()` if it is still this socket's.
struct ListeningSocket {
    /// The descriptor (handed to the HTTP server, which closes it).
    let descriptor: Int32
    /// What it listens on, for messages.
    let address: ListenAddress
    /// The socket file of a unix socket, with its device and inode, to remove at stop.
    let file: (path: String, device: UInt, inode: UInt)?

    /// Queue of connections not yet accepted.
    private static let backlog: Int32 = 16

    /// Opens `address` (`.defaultSocket` is the path given).
    static func open(_ address: ListenAddress, defaultPath: String, uid: uid_t) throws(ProfileServerError) -> ListeningSocket {
        switch address {
        case .ipv4(let bytes, let port):
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &socketAddress.sin_addr) { $0.copyBytes(from: bytes) }
            return try tcp(address, family: AF_INET, socketAddress)
        case .ipv6(let bytes, let port):
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &socketAddress.sin6_addr) { $0.copyBytes(from: bytes) }
            return try tcp(address, family: AF_INET6, socketAddress)
        case .unix(let path):
            return try unix(address, path: path, uid: uid)
        case .defaultSocket:
            return try unix(address, path: defaultPath, uid: uid)
        }
    }

    /// Removes the socket file, if this socket's is still there (not one that replaced it).
    func removeFile() {
        guard let file else { return }
        var info = stat()
        if lstat(file.path, &info) == 0, UInt(info.st_dev) == file.device, UInt(info.st_ino) == file.inode {
            unlink(file.path)
        }
    }

    private static func tcp<Address>(_ address: ListenAddress, family: Int32, _ socketAddress: Address) throws(ProfileServerError) -> ListeningSocket {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw .system("cannot make a socket for \(address)", errno) }
        var on: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 { setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size)) }
        var socketAddress = socketAddress
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<Address>.size)) }
        }
        guard bound == 0, listen(descriptor, backlog) == 0 else {
            let code = errno
            close(descriptor)
            throw .system("cannot listen on \(address)", code)
        }
        return ListeningSocket(descriptor: descriptor, address: address, file: nil)
    }

    /// A unix socket at `path`, mode 0600 from the moment it can be reached there: bound in a
    /// fresh directory of mode 0700 beside `path`, given mode 0600, then renamed into place. No
    /// umask is changed: the umask is the whole process's, and the program's other threads may
    /// be creating files meanwhile. A socket file already at `path` is replaced only if nothing
    /// listens on it any more (a process that ended without removing it); anything else there
    /// (a live socket, a file, another user's socket) is left alone and the server says why.
    private static func unix(_ address: ListenAddress, path: String, uid: uid_t) throws(ProfileServerError) -> ListeningSocket {
        try checkReplaceable(path, uid: uid)
        let slash = path.lastIndex(of: "/") ?? path.startIndex
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        var template = Array((directory == "/" ? "" : directory).utf8CString.dropLast()) + Array("/.stacksampler-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw .system("cannot create a directory beside \(path)", errno) }
        let privateDirectory = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { rmdir(privateDirectory) }
        let privatePath = privateDirectory + "/s"

        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard privatePath.utf8.count < capacity else {
            throw ProfileServerError("cannot listen on \(address): the socket's directory name is too long for a unix socket address (\(capacity - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: privatePath.utf8) }

        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw .system("cannot make a socket for \(address)", errno) }
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        var info = stat()
        guard bound == 0, chmod(privatePath, 0o600) == 0, listen(descriptor, backlog) == 0,
              rename(privatePath, path) == 0, lstat(path, &info) == 0 else {
            let code = errno
            close(descriptor)
            unlink(privatePath)
            throw .system("cannot listen on \(address)", code)
        }
        return ListeningSocket(descriptor: descriptor, address: address, file: (path, UInt(info.st_dev), UInt(info.st_ino)))
    }

    /// Throws unless `path` is free, or a socket file of `uid` that nothing listens on.
    private static func checkReplaceable(_ path: String, uid: uid_t) throws(ProfileServerError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw .system("cannot inspect \(path)", errno) }
            return
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ProfileServerError("\(path) exists and is not a socket; not replacing it (remove it or choose another path)")
        }
        guard info.st_uid == uid else {
            throw ProfileServerError("\(path) is a socket of uid \(info.st_uid), not this process's uid \(uid); not replacing it")
        }
        guard isListened(path) else { return }
        throw ProfileServerError("\(path) is in use by a running process; not replacing it")
    }

    /// Whether something may listen on the unix socket file `path` (true unless a connection is refused).
    static func isListened(_ path: String) -> Bool {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard probe >= 0 else { return true }
        defer { close(probe) }
        let connected = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return !(connected != 0 && errno == ECONNREFUSED)
    }
}
