import Foundation
import Glibc
import Testing
@testable import StackSamplerDaemon

/// The directory of default sockets, cleaned of those left by processes that are gone.
@Suite struct SocketDirectoryTests {
    /// A unix socket bound at `path`; listening (and left open) or closed at once (a stale file).
    func bound(_ path: String, listening: Bool) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        if listening {
            listen(fd, 1)
            return fd
        }
        close(fd)
        return -1
    }

    @Test("a socket of a process that is gone, which nothing listens on, is removed; a live one, this process's, a plain file stay")
    func removeStale() throws {
        let directory = try ProfileServerTests.scratch()
        let stale = directory + "/999999999.sock", live = directory + "/999999998.sock"
        let own = directory + "/\(getpid()).sock", plain = directory + "/999999997.sock"
        _ = bound(stale, listening: false)
        _ = bound(own, listening: false)
        let listener = bound(live, listening: true)
        defer { close(listener) }
        #expect(FileManager.default.createFile(atPath: plain, contents: Data("x".utf8)))
        SocketDirectory.removeStale(directory, uid: getuid())
        #expect(!FileManager.default.fileExists(atPath: stale))
        for kept in [live, own, plain] { #expect(FileManager.default.fileExists(atPath: kept), "\(kept)") }
    }
}
