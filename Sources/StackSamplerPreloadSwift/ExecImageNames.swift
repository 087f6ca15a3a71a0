import Glibc
import StackSampler

/// Names for the profile of a process image that calls exec.
///
/// exec keeps the pid, so with `%p` the new image would write the same file as the one before
/// it, and without `%p` the owner's file: the image before the exec writes its part to the name
/// with `.execN` put before the first dot of the file name (`out-1234.folded` becomes
/// `out-1234.exec1.folded`), N the first number whose file this process has not written yet;
/// the image that ends the process writes the plain name. A file older than the process (left
/// by an earlier one) does not count as written, so it is replaced, like a plain name is.
enum ExecImageNames {
    /// `path` with `.execN` before the first dot of its file name (at the end if it has none).
    static func name(_ path: String, image: Int) -> String {
        let fileStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        let file = path[fileStart...]
        let searchFrom = file.isEmpty ? file.startIndex : file.index(after: file.startIndex)
        let dot = file[searchFrom...].firstIndex(of: ".") ?? path.endIndex
        return String(path[..<dot]) + ".exec\(image)" + String(path[dot...])
    }

    /// The first image number N from 1 whose files (`paths` named with `.execN`) this process
    /// has not written.
    static func nextImage(for paths: [String]) -> Int {
        let processStart = processStartRealtimeNanoseconds()
        var image = 1
        while paths.contains(where: { writtenSince(processStart, name($0, image: image)) }) { image += 1 }
        return image
    }

    /// Whether `path` exists and was modified at or after `start` (realtime ns).
    private static func writtenSince(_ start: Int64, _ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec) >= start
    }

    /// When this process started (not this image: exec keeps it), in realtime ns, rounded down
    /// to the kernel's clock tick; 0 if unknown (then every existing file counts as written).
    private static func processStartRealtimeNanoseconds() -> Int64 {
        // Field 22 of /proc/self/stat, in clock ticks since boot; fields restart after the ')' of the name.
        guard let stat = FileIO.readProcText("/proc/self/stat", limit: 4096), let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Int64(fields[19]) else { return 0 }
        let ticksPerSecond = Int64(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0 else { return 0 }
        var realtime = timespec(), boottime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        clock_gettime(CLOCK_BOOTTIME, &boottime)
        let bootedAt = nanoseconds(realtime) - nanoseconds(boottime)
        return bootedAt + ticks * (1_000_000_000 / ticksPerSecond)
    }

    private static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
