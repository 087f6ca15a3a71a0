/// One header line of a response.
package struct HTTPHeader: Sendable, Equatable {
    package let name: String
    package let value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What the server answers: a status, headers and a body.
package struct HTTPResponse: Sendable, Equatable {
    package var status: Int
    package var headers: [HTTPHeader]
    package var body: [UInt8]

    package init(status: Int, headers: [HTTPHeader], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of header `name` (case-insensitive), if present.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// A plain-text error as Go's net/http/pprof sends it (`serveError`): `X-Go-Pprof: 1`, so
    /// that `go tool pprof` shows the text, and the text on one line.
    static func error(_ status: Int, _ text: String, extraHeaders: [HTTPHeader] = []) -> HTTPResponse {
        HTTPResponse(status: status,
                     headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("X-Go-Pprof", "1"),
                               HTTPHeader("X-Content-Type-Options", "nosniff")] + extraHeaders,
                     body: Array((text + "\n").utf8))
    }
}
