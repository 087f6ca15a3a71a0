import Glibc

/// The directory of a user's default sockets (`ServiceSocket.directory`), which only that user
/// may enter: created mode 0700 when missing; when it exists, used only if it is a real directory
/// (not a link) owned by the user with mode 0700, since whoever controls it controls who reaches
/// the sockets in it.
enum SocketDirectory {
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
