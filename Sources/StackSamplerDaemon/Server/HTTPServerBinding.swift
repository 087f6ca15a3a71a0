import CEngineHeader
import Glibc
import HTTPServerLibrary
import StackSampler

/// Bounds on clients (see `ss_http_limits`).
package struct HTTPServerLimits: Sendable, Equatable {
    /// Connections open at once, per listener.
    package var connectionLimit = 16
    /// Seconds a connection may stay idle (a slow client) before it is closed.
    package var connectionTimeoutSeconds = 15
    /// Bytes per connection, which bounds the request line and headers (larger: 414 or 431).
    package var connectionMemoryLimit = 16 * 1024

    package init() {}
}

/// One request, as the C server hands it to the handler.
struct HTTPRequest: @unchecked Sendable {
    // @unchecked: the C request is used from the loop's thread during the handler, then (once
    // deferred) by exactly one other thread, which answers it; http_server.c locks what they share.
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    var method: String { String(cString: ss_http_request_method(handle)) }
    var path: String { String(cString: ss_http_request_path(handle)) }
    var hasBody: Bool { ss_http_request_has_body(handle) != 0 }
    /// The `Accept` header, if sent.
    var accept: String? { ss_http_request_header(handle, "Accept").map { String(cString: $0) } }

    /// The query's arguments, percent-decoded, in order.
    var arguments: [(name: String, value: String?)] {
        var collected: [(name: String, value: String?)] = []
        withUnsafeMutablePointer(to: &collected) { pointer in
            ss_http_request_arguments(handle, { context, name, nameLength, value, valueLength in
                let list = context!.assumingMemoryBound(to: [(name: String, value: String?)].self)
                let text = { (bytes: UnsafePointer<CChar>, count: Int) in
                    String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
                }
                list.pointee.append((text(name, nameLength), value.map { text($0, valueLength) }))
            }, pointer)
        }
        return collected
    }

    /// Suspends the request, to be answered later from another thread; false if it cannot be.
    func deferAnswer() -> Bool { ss_http_request_defer(handle) == 0 }

    /// Answers the request (once).
    func respond(_ response: HTTPResponse) {
        var texts: [String] = []
        for header in response.headers { texts += [header.name, header.value] }
        let strings = texts.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = strings.map { UnsafePointer($0) }
        pointers.withUnsafeBufferPointer { headers in
            response.body.withUnsafeBytes { body in
                headers.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>.self, capacity: max(1, headers.count)) { names in
                    ss_http_request_respond(handle, UInt32(response.status), names, response.headers.count, body.baseAddress, body.count)
                }
            }
        }
    }
}

/// The C server (http_server.h) of a set of listening sockets, its loop run on a thread of the
/// profiler's own (never sampled), calling `handler` there for each request.
final class HTTPServerBinding: @unchecked Sendable {
    // @unchecked: `server` is set once in init; `thread` is written by start and read by stop,
    // both called by the owner (ProfileServer), which serializes them.
    private let server: OpaquePointer
    /// The boxed handler the C server calls, released at deinit.
    private let context: UnsafeMutableRawPointer
    private var thread: pthread_t?

    /// Serves `descriptors` (owned from now on, closed even if this throws).
    init(descriptors: [Int32], limits: HTTPServerLimits, handler: @escaping @Sendable (HTTPRequest) -> Void) throws(ProfileServerError) {
        let box = HandlerBox(handler)
        var error = [CChar](repeating: 0, count: 256)
        let cLimits = ss_http_limits(connection_limit: UInt32(limits.connectionLimit),
                                     connection_timeout_seconds: UInt32(limits.connectionTimeoutSeconds),
                                     connection_memory_limit: limits.connectionMemoryLimit)
        // The box lives as long as the server: released by deinit.
        let context = Unmanaged.passRetained(box).toOpaque()
        guard let created = ss_http_server_create(descriptors, descriptors.count, cLimits, { context, request in
            Unmanaged<HandlerBox>.fromOpaque(context!).takeUnretainedValue().handler(HTTPRequest(request))
        }, context, &error, error.count) else {
            Unmanaged<HandlerBox>.fromOpaque(context).release()
            throw ProfileServerError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        server = created
        self.context = context
    }

    /// Starts the loop on an unsampled thread. If the program takes the server's descriptors
    /// (closes or reuses their numbers), the loop ends at once and `onLost` is called on its thread.
    func start(onLost: @escaping @Sendable () -> Void) throws(ProfileServerError) {
        do {
            thread = try ProfilerThreads.spawn(named: "ss-http") { [self] in
                if ss_http_server_run(server) != 0 { onLost() }
            }
        } catch {
            throw ProfileServerError("\(error)")
        }
    }

    /// Stops the loop (deferred requests get 503) and waits for its thread; the sockets are closed.
    func stop() {
        ss_http_server_stop(server)
        if let thread {
            pthread_join(thread, nil)
            self.thread = nil
        }
    }

    deinit {
        ss_http_server_release(server)
        // The C server calls the handler only from its loop, which has ended (or never ran).
        Unmanaged<HandlerBox>.fromOpaque(context).release()
    }
}

/// The handler, boxed for the C server's context pointer.
private final class HandlerBox: Sendable {
    let handler: @Sendable (HTTPRequest) -> Void

    init(_ handler: @escaping @Sendable (HTTPRequest) -> Void) {
        self.handler = handler
    }
}
