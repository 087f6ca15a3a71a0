import Glibc
import HTTPClientLibrary

/// One HTTP request: GET or POST, over TCP or a unix socket, with bounds on its time.
package struct HTTPClientRequest: Sendable, Equatable {
    /// The HTTP method.
    package enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
    }

    /// The method.
    package var method: Method
    /// An `http://` or `https://` URL. With `unixSocketPath`, its host only fills the Host header.
    package var url: String
    /// A unix socket to connect to instead of the URL's host and port.
    package var unixSocketPath: String?
    /// Header fields, in order: `("Content-Type", "application/octet-stream")`.
    package var headers: [(name: String, value: String)]
    /// The body of a POST.
    package var body: [UInt8]
    /// Longest wait for the connection, in ms.
    package var connectTimeoutMilliseconds: Int
    /// Longest time for the whole exchange, in ms (0: no bound).
    package var totalTimeoutMilliseconds: Int
    /// A longer response body ends the exchange with an error (0: no bound).
    package var maxResponseBytes: Int
    /// Ends the exchange early (within about a second) once cancelled from another thread.
    package var cancellation: HTTPCancellation?

    /// A request; by default 5 s to connect, 30 s in all, and a response of at most 256 MiB.
    package init(method: Method = .get, url: String, unixSocketPath: String? = nil, headers: [(name: String, value: String)] = [],
                body: [UInt8] = [], connectTimeoutMilliseconds: Int = 5000, totalTimeoutMilliseconds: Int = 30000,
                maxResponseBytes: Int = 256 << 20) {
        self.method = method
        self.url = url
        self.unixSocketPath = unixSocketPath
        self.headers = headers
        self.body = body
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.totalTimeoutMilliseconds = totalTimeoutMilliseconds
        self.maxResponseBytes = maxResponseBytes
    }

    /// The value of the first header named `name` (case-insensitive), if any.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    package static func == (left: HTTPClientRequest, right: HTTPClientRequest) -> Bool {
        left.method == right.method && left.url == right.url && left.unixSocketPath == right.unixSocketPath
            && left.headers.map(\.name) == right.headers.map(\.name) && left.headers.map(\.value) == right.headers.map(\.value)
            && left.body == right.body && left.connectTimeoutMilliseconds == right.connectTimeoutMilliseconds
            && left.totalTimeoutMilliseconds == right.totalTimeoutMilliseconds && left.maxResponseBytes == right.maxResponseBytes
    }
}

/// A flag that ends the exchanges of the requests that carry it: `cancel()` from any thread.
package final class HTTPCancellation: @unchecked Sendable {
    /// Read by libcurl's progress callback, written once by `ss_http_cancel` (atomically, in C).
    fileprivate let flag: UnsafeMutablePointer<Int32>

    /// A flag not yet set.
    package init() {
        flag = .allocate(capacity: 1)
        flag.initialize(to: 0)
    }

    deinit { flag.deallocate() }

    /// Ends the exchanges now running with this flag, and any started later.
    package func cancel() { ss_http_cancel(flag) }
}

/// A response: its status and body, whatever the status.
package struct HTTPClientResponse: Sendable, Equatable {
    /// The HTTP status code.
    package var status: Int
    /// The body.
    package var body: [UInt8]

    /// A response with this status and body.
    package init(status: Int, body: [UInt8] = []) {
        self.status = status
        self.body = body
    }

    /// The body as text (invalid UTF-8 repaired), without trailing newlines.
    package var text: String {
        var text = String(decoding: body, as: UTF8.self)
        while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
        return text
    }
}

/// Why no response came back.
package enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcurl could not be loaded (`reason` says why and what to install).
    case libraryUnavailable(String)
    /// The exchange failed: no connection, a timeout, a response too large (`reason` is libcurl's message).
    case transferFailed(url: String, reason: String)

    package var description: String {
        switch self {
        case .libraryUnavailable(let reason): reason
        case .transferFailed(let url, let reason): "\(url): \(reason)"
        }
    }
}

/// Something that makes HTTP requests: `HTTPClient`, or a fake in tests.
package protocol HTTPTransport: Sendable {
    /// Makes `request` and waits for the whole response (or the request's time bound).
    func send(_ request: HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError>
}

/// An HTTP client on libcurl, which it loads privately (`dlopen` with `RTLD_LOCAL`) on the first
/// request, so that a process that never makes one never maps it. Blocks the calling thread for
/// the exchange; any number of threads may make requests at once. Raises no signal.
package struct HTTPClient: HTTPTransport {
    /// A client.
    package init() {}

    /// Whether libcurl can be loaded; nil when it can, else why not.
    package static func unavailableReason() -> String? {
        ss_libcurl_load() == nil ? String(cString: ss_libcurl_load_error()) : nil
    }

    package func send(_ request: HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError> {
        if let reason = Self.unavailableReason() { return .failure(.libraryUnavailable(reason)) }
        let lines = request.headers.map { "\($0.name): \($0.value)" }
        var response = ss_http_response()
        let status: Int32 = withCStrings(lines) { headerPointers in
            request.body.withUnsafeBytes { body in
                request.method.rawValue.withCString { method in
                    request.url.withCString { url in
                        withOptionalCString(request.unixSocketPath) { socket in
                            var raw = ss_http_request(
                                method: method, url: url, unix_socket_path: socket, headers: headerPointers,
                                header_count: lines.count, body: body.baseAddress, body_length: body.count,
                                connect_timeout_ms: request.connectTimeoutMilliseconds,
                                total_timeout_ms: request.totalTimeoutMilliseconds,
                                max_response_bytes: request.maxResponseBytes, cancel: request.cancellation?.flag)
                            return ss_http_perform(&raw, &response)
                        }
                    }
                }
            }
        }
        defer { ss_http_response_free(&response) }
        guard status == 0 else {
            let reason = withUnsafeBytes(of: &response.error) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            return .failure(.transferFailed(url: request.url, reason: reason))
        }
        let body = response.body.map { Array(UnsafeBufferPointer(start: $0, count: response.body_length)) } ?? []
        return .success(HTTPClientResponse(status: Int(response.status), body: body))
    }
}

/// Calls `body` with C strings of `strings`, valid during the call.
private func withCStrings<Result>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>>?) -> Result) -> Result {
    let copies = strings.map { strdup($0)! }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}

/// Calls `body` with a C string of `string`, or nil.
private func withOptionalCString<Result>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> Result) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}
