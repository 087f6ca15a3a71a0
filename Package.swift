// swift-tools-version:6.0
import PackageDescription

/// The library and the preload library are loaded into every profiled process: they import
/// neither Swift Concurrency nor string processing, so those runtime libraries (and
/// libdispatch) are not loaded into the target.
let lightSwift: [SwiftSetting] = [.unsafeFlags([
    "-Xfrontend", "-disable-implicit-concurrency-module-import",
    "-Xfrontend", "-disable-implicit-string-processing-module-import",
])]

/// Warnings on and C11 for the C engine; the engine builds clean under these. No PLT stubs: a
/// call into the C library goes through the GOT, so that no sample of a program thread that
/// runs the engine's code lands in a stub no walk can tell from the program's (own_code.c).
let engineCFlags: [CSetting] = [.unsafeFlags(["-std=c11", "-Wall", "-Wextra", "-fno-omit-frame-pointer", "-fno-plt"])]

let package = Package(
    name: "StackSampler",
    products: [
        // Swift users link the engine in with the library.
        .library(name: "StackSampler", targets: ["StackSampler", "CEngine"]),
        // Preloaded into every process: the C engine and its interpositions, no Swift.
        .library(name: "StackSamplerPreload", type: .dynamic, targets: ["StackSamplerPreload"]),
        // Loaded by the preload library (dlopen, beside it) only when profiling is asked for.
        .library(name: "StackSamplerPreloadSwift", type: .dynamic, targets: ["StackSamplerPreloadSwift"]),
        .executable(name: "stacksampler", targets: ["stacksampler"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // The C engine: signal handler, timers, unwinding, sample buffer. Knows nothing of Swift.
        .target(
            name: "CEngine",
            cSettings: engineCFlags,
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread"), .linkedLibrary("rt")]
        ),
        // The engine's declarations alone (CEngine/include), for Swift code whose engine is linked
        // elsewhere: the preload library's Swift part binds to the preload library's one engine.
        .systemLibrary(name: "CEngineHeader", path: "Sources/CEngineHeader"),
        // The C API's declarations alone (StackSamplerPreload/include/stacksampler.h), for its Swift side.
        .systemLibrary(name: "CAPIHeader", path: "Sources/CAPIHeader"),
        // zlib's declarations (zlib1g-dev), for the tests, which gunzip pprof files.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // The one loader of a library kept out of the program's global scope (dlopen RTLD_LOCAL on
        // first use, its functions in a table); each image that links it keeps its own.
        .target(name: "PrivateLibrary", cSettings: engineCFlags, linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),
        // libelf and libdw (the symbolizer: ELF, source lines and inlined calls from DWARF), liblzma
        // (MiniDebugInfo, debuglink CRCs) and zlib (gzip-compressed pprof files), loaded privately on
        // first use, through tables of their functions. Only their headers are needed to build, from
        // the system's include path (Debian's libelf-dev, libdw-dev, liblzma-dev, zlib1g-dev).
        .target(name: "FileFormatLibraries", dependencies: ["PrivateLibrary"], cSettings: engineCFlags),
        // libcurl loaded privately on first use, through a table of its functions, and one whole
        // request in C (curl_easy_setopt is variadic). Debian's libcurl4-openssl-dev for the header.
        .target(name: "HTTPClientLibrary", dependencies: ["PrivateLibrary"], cSettings: engineCFlags),
        // The Swift core: sampler thread, aggregation, symbols, exporters. No Foundation. Public: the
        // Swift API (Profiler, ProfilerConfiguration, Profile, its formats and errors); what the CLI,
        // the daemon and the preload library share beyond that is package.
        .target(name: "StackSampler", dependencies: ["CEngineHeader", "FileFormatLibraries"], swiftSettings: lightSwift),
        // The preload library's own code (C): constructor, C API, loading of the Swift part.
        // No Swift runtime in its dependencies: see no_swift_runtime.c.
        // Bound at load (-z now): a call's first run through the lazy resolver saves the whole
        // vector state on the stack (3 KiB measured), which the signal handler, on a thread with
        // little stack left, cannot afford, and must not enter the loader anyway.
        .target(name: "StackSamplerPreload", dependencies: ["CEngine"], cSettings: engineCFlags,
                linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"])]),
        // The HTTP server of the daemon's pull endpoints, over libmicrohttpd (Debian's libmicrohttpd-dev
        // for the header, libmicrohttpd12 at run time) loaded privately only when a listener is asked for.
        .target(name: "HTTPServerLibrary", dependencies: ["PrivateLibrary"], cSettings: engineCFlags, linkerSettings: [.linkedLibrary("pthread")]),
        // The daemon: continuous windows written, served over HTTP and pushed. No Foundation. Not a
        // product: its declarations are package.
        .target(name: "StackSamplerDaemon", dependencies: ["StackSampler", "CEngineHeader", "HTTPClientLibrary", "HTTPServerLibrary"], swiftSettings: lightSwift),
        // The preload library's Swift part: sessions from the environment and the C API.
        .target(name: "StackSamplerPreloadSwift", dependencies: ["StackSampler", "StackSamplerDaemon", "CAPIHeader"], swiftSettings: lightSwift),
        .executableTarget(
            name: "stacksampler",
            dependencies: ["StackSampler", "StackSamplerDaemon", "CEngine", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // What tests of several targets share, all run in one test process: a receiver standing in
        // for Pyroscope, a scripted transport, a CPU burn, one profiler session at a time, profiles
        // built by hand, and readers of what the profiler writes (gunzip, the official OTLP definitions).
        .target(name: "TestSupport", dependencies: ["StackSamplerDaemon", "CZlib"], path: "Tests/TestSupport",
                linkerSettings: [.linkedLibrary("z")]),
        .testTarget(name: "StackSamplerTests", dependencies: ["StackSampler", "StackSamplerDaemon", "CEngine", "TestSupport"],
                    // Read through #filePath by the replay tests (WallTraceReplayTests).
                    exclude: ["WallTraces"]),
        .testTarget(name: "StackSamplerDaemonTests", dependencies: ["StackSamplerDaemon", "CEngine", "TestSupport"]),
        // The CLI's own types (the top table), through @testable import of the executable's module.
        .testTarget(name: "StackSamplerCLITests", dependencies: ["stacksampler"]),
        .testTarget(name: "EndToEndTests", dependencies: []),
    ]
)
