import Testing
@testable import StackSamplerDaemon

/// `STACKSAMPLER_LISTEN`'s text: numeric addresses bound exactly, unix sockets, clear refusals.
@Suite struct ListenAddressTests {
    @Test("accepted forms parse, and print back as written")
    func accepted() throws {
        #expect(try ListenAddress.parse("127.0.0.1:6060") == .ipv4(address: [127, 0, 0, 1], port: 6060))
        #expect(try ListenAddress.parse("[::1]:6061") == .ipv6(address: [UInt8](repeating: 0, count: 15) + [1], port: 6061))
        #expect(try ListenAddress.parse("0.0.0.0:1") == .ipv4(address: [0, 0, 0, 0], port: 1))
        #expect(try ListenAddress.parse("unix:/run/app/p.sock") == .unix(path: "/run/app/p.sock"))
        #expect(try ListenAddress.parse("unix") == .defaultSocket)
        for text in ["127.0.0.1:6060", "[::1]:6061", "unix:/run/app/p.sock", "unix", "10.1.2.3:65535"] {
            #expect(try ListenAddress.parse(text).description == text)
        }
    }

    @Test("a list: separated by commas, duplicates once")
    func list() throws {
        #expect(try ListenAddress.parseList("127.0.0.1:6060,unix,127.0.0.1:6060") == [.ipv4(address: [127, 0, 0, 1], port: 6060), .defaultSocket])
        #expect(throws: ListenAddressError.self) { try ListenAddress.parseList("") }
        #expect(throws: ListenAddressError.self) { try ListenAddress.parseList("unix,,unix") }
    }

    @Test("refusals name the text and what is accepted",
          arguments: [("6060", "HOST:PORT"), (":6060", "127.0.0.1:6060"), ("localhost:6060", "numeric IPv4"),
                      ("127.0.0.1:0", "1 to 65535"), ("127.0.0.1:65536", "1 to 65535"), ("127.0.0.1:60a", "1 to 65535"),
                      ("127.0.0.1:-1", "1 to 65535"), ("::1:6060", "brackets"), ("[::1]", "port"), ("[zz]:1", "IPv6"),
                      ("unix:", "needs a path"), ("unix:relative.sock", "absolute"),
                      ("unix:/" + String(repeating: "a", count: 120), "107 bytes"), ("256.0.0.1:80", "numeric IPv4")])
    func refused(text: String, hint: String) {
        do {
            _ = try ListenAddress.parse(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.description.contains("'\(text)'"), "\(error)")
            #expect(error.description.contains(hint), "\(error)")
        }
    }
}
