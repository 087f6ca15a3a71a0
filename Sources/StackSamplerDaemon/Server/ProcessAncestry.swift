import Glibc

/// A process's ancestors, read from `/proc/PID/stat` (field 4, the parent): the wrapper, shell
/// or supervisor that started a service, and theirs. Never the process itself.
enum ProcessAncestry {
    /// The most ancestors followed: a chain of wrappers is short.
    static let maximumDepth = 16

    /// `pid`'s parent, grandparent and so on, nearest first, up to init (not included).
    static func ancestors(of pid: pid_t) -> [pid_t] {
        var chain: [pid_t] = []
        var current = pid
        while chain.count < maximumDepth, let parent = parent(of: current), parent > 1 {
            chain.append(parent)
            current = parent
        }
        return chain
    }

    /// Whether `ancestor` started `pid`, directly or through processes between them.
    static func isDescendant(_ pid: pid_t, of ancestor: pid_t) -> Bool {
        ancestors(of: pid).contains(ancestor)
    }

    /// The parent of `pid`, or nil if it cannot be read (gone, or another user's hidden by the mount).
    private static func parent(of pid: pid_t) -> pid_t? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 1024)
        let length = read(descriptor, &bytes, bytes.count)
        guard length > 0 else { return nil }
        // After the command name, which may hold spaces and parentheses: ") S PPID …".
        guard let close = bytes[..<length].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = bytes[(close + 1)..<length].split(separator: UInt8(ascii: " "))
        guard fields.count > 1 else { return nil }
        return pid_t(String(decoding: fields[1], as: UTF8.self))
    }
}
