import Glibc

/// Where the profile server listens, as `STACKSAMPLER_LISTEN` says it: `HOST:PORT` (TCP, bound
/// to exactly that numeric address: `127.0.0.1:6060`, `[::1]:6060`), `unix:PATH`, or `unix` (the
/// default per-process socket alone, which the server always has). Several, separated by commas.
package enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// TCP on an IPv4 address, as 4 bytes in network order, and a port.
    case ipv4(address: [UInt8], port: UInt16)
    /// TCP on an IPv6 address, as 16 bytes in network order, and a port.
    case ipv6(address: [UInt8], port: UInt16)
    /// A unix-domain socket at this path.
    case unix(path: String)
    /// The default per-process socket (`ServiceSocket.defaultPath`).
    case defaultSocket

    /// The address as it is written in the setting.
    package var description: String {
        switch self {
        case .ipv4(let address, let port): "\(Self.text(of: address, family: AF_INET)):\(port)"
        case .ipv6(let address, let port): "[\(Self.text(of: address, family: AF_INET6))]:\(port)"
        case .unix(let path): "unix:\(path)"
        case .defaultSocket: "unix"
        }
    }

    /// Parses one address; the error says what is accepted.
    package static func parse(_ text: String) throws(ListenAddressError) -> ListenAddress {
        if text == "unix" { return .defaultSocket }
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard !path.isEmpty else { throw ListenAddressError(text, "unix: needs a path, such as unix:/run/app/profile.sock (or unix alone for the default socket)") }
            guard path.hasPrefix("/") else { throw ListenAddressError(text, "the socket path must be absolute, such as unix:/run/app/profile.sock") }
            guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
                throw ListenAddressError(text, "the socket path is longer than the 107 bytes a unix socket address holds")
            }
            guard !path.utf8.contains(0) else { throw ListenAddressError(text, "the socket path contains a NUL byte") }
            return .unix(path: path)
        }
        guard let colon = text.lastIndex(of: ":") else {
            throw ListenAddressError(text, "expected HOST:PORT such as 127.0.0.1:6060 or [::1]:6060, unix:PATH, or unix")
        }
        let host = text[..<colon]
        let portText = text[text.index(after: colon)...]
        guard let port = UInt16(portText), port > 0, portText.allSatisfy(\.isASCII) else {
            throw ListenAddressError(text, "the port must be a number from 1 to 65535")
        }
        if host.isEmpty {
            throw ListenAddressError(text, "give the address to bind, such as 127.0.0.1:\(port) (0.0.0.0:\(port) for every interface)")
        }
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2 {
            guard let address = bytes(of: String(host.dropFirst().dropLast()), family: AF_INET6, count: 16) else {
                throw ListenAddressError(text, "\(host) is not a numeric IPv6 address such as [::1]")
            }
            return .ipv6(address: address, port: port)
        }
        guard let address = bytes(of: String(host), family: AF_INET, count: 4) else {
            throw ListenAddressError(text, "\(host) is not a numeric IPv4 address such as 127.0.0.1 (IPv6 goes in brackets: [::1]:\(port))")
        }
        return .ipv4(address: address, port: port)
    }

    /// Parses the setting's comma-separated list. The default socket is not added here: the
    /// server always has it.
    package static func parseList(_ text: String) throws(ListenAddressError) -> [ListenAddress] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
        guard !text.isEmpty, parts.allSatisfy({ !$0.isEmpty }) else {
            throw ListenAddressError(text, "expected one or more addresses separated by commas: HOST:PORT, unix:PATH or unix")
        }
        var addresses: [ListenAddress] = []
        for part in parts {
            let address = try parse(part)
            if !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }

    private static func bytes(of text: String, family: Int32, count: Int) -> [UInt8]? {
        var storage = [UInt8](repeating: 0, count: 16)
        let parsed = storage.withUnsafeMutableBytes { inet_pton(family, text, $0.baseAddress) }
        return parsed == 1 ? Array(storage.prefix(count)) : nil
    }

    private static func text(of address: [UInt8], family: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let padded = address + [UInt8](repeating: 0, count: max(0, 16 - address.count))
        let ok = padded.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        return ok ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
}

/// A listen address that does not parse; the description names it and what is accepted.
package struct ListenAddressError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text that was given.
    package let text: String
    /// What is wrong and what is accepted.
    package let reason: String

    init(_ text: String, _ reason: String) {
        self.text = text
        self.reason = reason
    }

    package var description: String { "listen address '\(text)': \(reason)" }
}
