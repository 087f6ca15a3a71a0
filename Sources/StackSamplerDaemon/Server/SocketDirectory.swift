import Glibc

/// The directory of a user's default sockets (`ServiceSocket.directory`), which only that user
/// may enter: created mode 0700 when missing; when it exists, used only if it is a real directory
/// (not a link) owned by the user with mode 0700, since whoever controls it controls who reaches
/// the sockets in it.
enum SocketDirectory {
    /// Removes the sockets in `path` left by processes that ended without removing theirs
    /// (killed, or a forked child that left by `_exit`, as multiprocessing's workers do): a
    /// `PID.sock` socket file of `uid` whose process is gone and on which nothing listens. So
    /// that the directory does not grow with every such process; bounded by the entries there.
    static func removeStale(_ path: String, uid: uid_t) {
        guard let directory = opendir(path) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.hasSuffix(".sock"), let pid = pid_t(name.dropLast(5)), pid > 0,
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            let socketPath = path + "/" + name
            var info = stat()
            guard lstat(socketPath, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == uid,
                  !ListeningSocket.isListened(socketPath) else { continue }
            unlink(socketPath)
        }
    }

    /// Makes sure `path` is such a directory for `uid`, or says why it is not.
    static func prepare(_ path: String, uid: uid_t) throws(ProfileServerError) {
        if mkdir(path, 0o700) == 0 {
            // The umask may have taken bits away; the directory is new and ours, so set them.
            guard chmod(path, 0o700) == 0 else { throw .system("cannot set the mode of \(path)", errno) }
        } else if errno != EEXIST {
            throw .system("cannot create the socket directory \(path)", errno)
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .system("cannot inspect the socket directory \(path)", errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ProfileServerError("\(path) exists and is not a directory (a link or a file); not listening on the default socket. Remove it, or set STACKSAMPLER_LISTEN=unix:PATH")
        }
        guard info.st_uid == uid else {
            throw ProfileServerError("\(path) belongs to uid \(info.st_uid), not to this process's uid \(uid); not listening on the default socket")
        }
        guard info.st_mode & 0o7777 == 0o700 else {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw ProfileServerError("\(path) has mode \(mode), not 0700 (others could reach its sockets); not listening on the default socket. Run chmod 700 \(path)")
        }
    }
}
