// swift-tools-version:6.0
// A Hummingbird 2 service for the end-to-end tests that profile a real Swift server: two routes,
// each awaiting a stage that burns CPU in a function of its own (`renderUsers`, `renderOrders`),
// behind a middleware. Built in release, as services are deployed (`swift build -c release`).
import PackageDescription

let package = Package(
    name: "HBService",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "HBService",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
