// swift-tools-version:6.0
import PackageDescription

/// The library and the preload library are loaded into every profiled process: they import
/// neither Swift Concurrency nor string processing, so those runtime libraries (and
/// libdispatch) are not loaded into the target.
let lightSwift: [SwiftSetting] = [.unsafeFlags([
    "-Xfrontend", "-disable-implicit-concurrency-module-import",
    "-Xfrontend", "-disable-implicit-string-processing-module-import",
])]

/// Warnings on and C11 for the C engine; the engine builds clean under these.
let engineCFlags: [CSetting] = [.unsafeFlags(["-std=c11", "-Wall", "-Wextra", "-fno-omit-frame-pointer"])]

let package = Package(
    name: "StackSampler",
    products: [
        .library(name: "StackSampler", targets: ["StackSampler"]),
        .library(name: "StackSamplerPreload", type: .dynamic, targets: ["StackSamplerPreload"]),
        .executable(name: "stacksampler", targets: ["stacksampler"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The C engine: signal handler, timers, unwinding, sample buffer. Knows nothing of Swift.
        .target(
            name: "CSupport",
            path: "CSupport",
            cSettings: engineCFlags,
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread"), .linkedLibrary("rt")]
        ),
        // libelf from Debian's libelf-dev, for the symbolizer.
        .systemLibrary(name: "CElf", path: "Sources/CElf", providers: [.apt(["libelf-dev"])]),
        // liblzma from Debian's liblzma-dev: .gnu_debugdata (MiniDebugInfo) and debuglink CRCs.
        .systemLibrary(name: "CLzma", path: "Sources/CLzma", providers: [.apt(["liblzma-dev"])]),
        // libdw from Debian's libdw-dev: source lines and inlined calls from DWARF (--lines).
        .systemLibrary(name: "CDw", path: "Sources/CDw", providers: [.apt(["libdw-dev"])]),
        // zlib from Debian's zlib1g-dev, for gzip-compressed pprof files.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The Swift core: sampler thread, aggregation, symbols, exporters. No Foundation.
        .target(name: "StackSampler", dependencies: ["CSupport", "CElf", "CDw", "CLzma", "CZlib"], swiftSettings: lightSwift),
        // The library constructor of the preload product (C, so it runs before main).
        .target(name: "PreloadEntry", cSettings: engineCFlags),
        .target(name: "StackSamplerPreload", dependencies: ["StackSampler", "PreloadEntry"], swiftSettings: lightSwift),
        .executableTarget(
            name: "stacksampler",
            dependencies: ["StackSampler", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .testTarget(name: "StackSamplerTests", dependencies: ["StackSampler", "CZlib"]),
        .testTarget(name: "EndToEndTests", dependencies: []),
    ]
)
