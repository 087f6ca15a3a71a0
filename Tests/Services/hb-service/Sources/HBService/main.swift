// HBService: a Hummingbird 2 server on 127.0.0.1 at an ephemeral port, which it prints as
// `listening PORT` once it accepts connections. Routes:
// - GET /users: awaits `usersPage`, which awaits `loadUsers` and then runs `renderUsers`
//   (about 1 ms of CPU);
// - GET /orders: awaits `ordersPage`, which runs `renderOrders` (about 2 ms of CPU);
// both behind `TimingMiddleware`. It stops on SIGTERM or SIGINT (ServiceLifecycle's graceful
// shutdown), and prints the requests it served.
import Foundation
import Hummingbird

/// Burns about `microseconds` of the calling thread's CPU time; a value derived from the work.
@inline(never)
func burn(microseconds: Double, seed: UInt64) -> UInt64 {
    var usage = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &usage)
    let end = Double(usage.tv_sec) * 1e6 + Double(usage.tv_nsec) / 1e3 + microseconds
    var x = seed
    repeat {
        for _ in 0..<2048 { x = x &* 6364136223846793005 &+ 1442695040888963407 }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &usage)
    } while Double(usage.tv_sec) * 1e6 + Double(usage.tv_nsec) / 1e3 < end
    return x
}

/// The users page's CPU work.
@inline(never)
func renderUsers(count: Int) -> String {
    "users \(count) \(burn(microseconds: 1000, seed: UInt64(count)) & 0xFF)\n"
}

/// The orders page's CPU work.
@inline(never)
func renderOrders(count: Int) -> String {
    "orders \(count) \(burn(microseconds: 2000, seed: UInt64(count) ^ 0x5A5A) & 0xFF)\n"
}

/// The users the page lists: an await that suspends (a yield), as a database call would.
@inline(never)
func loadUsers() async -> Int {
    await Task.yield()
    return 20
}

/// The users route's handler: awaits the load, then renders.
@inline(never)
func usersPage() async -> String {
    let count = await loadUsers()
    return renderUsers(count: count)
}

/// The orders route's handler.
@inline(never)
func ordersPage() async -> String {
    renderOrders(count: 7)
}

/// Counts the requests served, for the line printed at exit.
final class RequestCount: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var value = 0
    func add() { lock.withLock { value += 1 } }
    var total: Int { lock.withLock { value } }
}

/// A middleware every request passes through, as a real service has (logging, metrics).
struct TimingMiddleware<Context: RequestContext>: RouterMiddleware {
    let served: RequestCount
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        served.add()
        return response
    }
}

let served = RequestCount()
let router = Router()
router.add(middleware: TimingMiddleware(served: served))
router.get("users") { _, _ -> String in await usersPage() }
router.get("orders") { _, _ -> String in await ordersPage() }
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { channel in
        FileHandle.standardOutput.write(Data("listening \(channel.localAddress?.port ?? 0)\n".utf8))
    }
)
try await app.runService()
FileHandle.standardOutput.write(Data("served \(served.total)\n".utf8))
