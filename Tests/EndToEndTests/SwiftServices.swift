import Foundation
import Synchronization

/// The real Swift services the end-to-end tests profile: SwiftPM packages under Tests/Services,
/// built in release as services are deployed (`swift build -c release`, which passes -g), once
/// per test run. `Scripts/test.sh` builds them before the tests, so that their build time is
/// counted apart from the tests'; here the build is then a quick no-op.
enum SwiftService: String, CaseIterable, Sendable {
    /// A Hummingbird 2 server (Tests/Services/hb-service): `GET /users` awaits `usersPage`, which
    /// awaits `loadUsers` and runs `renderUsers`; `GET /orders` awaits `ordersPage`, which runs
    /// `renderOrders`; both behind `TimingMiddleware`. Prints `listening PORT`, and `served N` when
    /// SIGTERM stops it.
    case hummingbird = "hb-service"

    /// The package's directory.
    var package: String { PackagePaths.root + "/Tests/Services/" + rawValue }
    /// Its build folder (ignored by git, as every `.build-*` is).
    var scratch: String { PackagePaths.root + "/.build-" + rawValue }
    /// The product's name.
    var product: String {
        switch self {
        case .hummingbird: "HBService"
        }
    }

    private static let built = Mutex<[SwiftService: String]>([:])

    /// The service's executable, copied where every user can run it; built now if this run has not yet.
    func executable() throws -> String {
        try Self.built.withLock { cache in
            if let path = cache[self] { return path }
            let build = try ChildProcess.run("/usr/bin/env", ["swift", "build", "-c", "release", "--package-path", package,
                                                              "--scratch-path", scratch, "--product", product],
                                             in: ScratchDirectory.run, timeout: .seconds(1800))
            guard build.termination == .exited(0) else { throw HarnessError("building \(package) failed: \(build)") }
            let bin = ScratchDirectory.run + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            let copy = bin + "/" + rawValue
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: scratch + "/release/" + product, toPath: copy)
            chmod(copy, 0o755)
            cache[self] = copy
            return copy
        }
    }
}
