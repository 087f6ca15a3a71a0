import CEngineHeader
import Glibc
import StackSampler

/// The holder's side of giving the listen addresses up to the program a wrapper started: a
/// program started by a profiled process under the same daemon settings asks it, from the
/// preload library's constructor (owner_handover.c), on its default socket. Only a descendant
/// may have them, and only from a process that has done nothing but start a program and wait
/// for it (`timeout`, a shell script, `tini`): a service that runs a helper program keeps them.
enum ListenRelease {
    /// The path of the request, with the requester's pid as `?pid=N`.
    static let path = "/debug/stacksampler/listen/release"
    /// The most CPU a wrapper's main thread has used: starting a program takes a few ms.
    static let wrapperCPUBound: Int64 = 100_000_000

    /// The answer to `requester`: `release` (which stops serving the addresses and says which
    /// they were, or nil if it held none) is called only for a descendant, and only when this
    /// process only starts programs (`onlyStarts`, the main thread's state by default).
    static func answer(_ requester: pid_t, onlyStarts: () -> Bool = mainThreadOnlyWaits, release: () -> [String]?) -> HTTPResponse {
        let pid = getpid()
        guard ProcessAncestry.isDescendant(requester, of: pid) else {
            return .error(403, "process \(requester) is not a descendant of process \(pid): the listen addresses go only to a program it started")
        }
        guard onlyStarts() else {
            return .error(409, "process \(pid) does more than start process \(requester) and wait for it: it keeps its listen addresses")
        }
        guard let released = release(), !released.isEmpty else {
            return .error(409, "process \(pid) holds no listen address to give up")
        }
        StandardError.report("process \(pid) only started process \(requester): its listen address (\(released.joined(separator: ", "))) goes to it")
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                            body: Array("released \(released.joined(separator: ", ")) to process \(requester)\n".utf8))
    }

    /// System calls a wrapper waits in: wait4, waitid, rt_sigsuspend, rt_sigtimedwait, pause (x86-64).
    private static let waitingCalls: Set<Int> = [61, 247, 130, 128, 34]

    /// Whether the main thread waits for a child or a signal, after less than `wrapperCPUBound` of CPU.
    static func mainThreadOnlyWaits() -> Bool {
        let pid = getpid()
        guard ss_thread_cpu_time_ns(pid) < wrapperCPUBound else { return false }
        let descriptor = open("/proc/self/task/\(pid)/syscall", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let length = read(descriptor, &bytes, bytes.count)
        guard length > 0, let call = Int(String(decoding: bytes[..<length].prefix { $0 != UInt8(ascii: " ") && $0 != 10 }, as: UTF8.self))
        else { return false }
        return waitingCalls.contains(call)
    }
}
