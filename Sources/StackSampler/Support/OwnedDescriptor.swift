import Glibc

/// A file the profiler opened in the program's process (the raw stream and the stalls file it
/// writes while the program runs, an ELF file it reads), known by what it is, not only by its
/// number. The program may close any descriptor and get its number back for a file of its own
/// (a daemon closes 3 to 1023 as it starts, then opens its data file as 3): before every write,
/// and before closing, the descriptor is checked to hold still the file opened (its device and
/// inode). Once it does not, the file is lost: nothing more is written to it or closed, and
/// the owner says so. (Between that check and the write the program could still swap the file
/// in another thread: a window of one system call.)
final class OwnedDescriptor {
    private let descriptor: Int32
    private let device: UInt64
    private let inode: UInt64
    /// Set once the descriptor no longer holds the file opened.
    private(set) var isLost = false

    /// Takes `descriptor`, just opened by the session.
    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        var status = stat()
        if fstat(descriptor, &status) == 0 {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        } else {
            device = 0
            inode = 0
            isLost = true
        }
    }

    deinit {
        if holdsFile { close(descriptor) }
    }

    /// Whether the descriptor still holds the file opened; notes the loss when not.
    private var holdsFile: Bool {
        guard !isLost else { return false }
        var status = stat()
        if fstat(descriptor, &status) != 0 || UInt64(status.st_dev) != device || UInt64(status.st_ino) != inode { isLost = true }
        return !isLost
    }

    /// Writes all of `bytes`: nil on success, else why not (the file lost, or the write's error).
    func write(_ bytes: [UInt8]) -> String? {
        guard holdsFile else { return "its descriptor \(descriptor) was closed by the program (or given to a file of its own)" }
        return FileIO.write(bytes, toDescriptor: descriptor)
    }
}
