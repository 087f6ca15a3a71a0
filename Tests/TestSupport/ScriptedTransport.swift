import Foundation
import StackSamplerDaemon

/// A transport that answers from a script, and can hold requests until released.
package final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    private let lock = NSCondition()
    private var script: [Result<HTTPClientResponse, HTTPClientError>]
    private var held = false
    package private(set) var sent: [HTTPClientRequest] = []

    package init(_ script: [Result<HTTPClientResponse, HTTPClientError>]) { self.script = script }

    /// Requests wait in `send` until `release()`.
    package func hold() { lock.withLock { held = true } }
    package func release() { lock.withLock { held = false; lock.broadcast() } }
    package var requests: [HTTPClientRequest] { lock.withLock { sent } }

    package func send(_ request: HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError> {
        lock.withLock {
            sent.append(request)
            lock.broadcast()
            while held { lock.wait() }
            return script.isEmpty ? .success(HTTPClientResponse(status: 200)) : script.removeFirst()
        }
    }

    /// Waits (at most 10 s) until `count` requests were made.
    package func waitForRequests(_ count: Int) -> Bool {
        lock.withLock {
            let end = Date().addingTimeInterval(10)
            while sent.count < count { if !lock.wait(until: end) { return false } }
            return true
        }
    }
}
