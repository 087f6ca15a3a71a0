import Foundation
import Synchronization

/// The built StackSampler artifacts the end-to-end tests run: the preload library and the CLI.
///
/// They come from `$STACKSAMPLER_BUILD_DIR` when set, else from `<package root>/.build/release`.
/// The tests do not build them: `swift test` builds debug products in its own scratch path.
enum BuildProducts {
    /// The directory holding the release build products.
    static var directory: String {
        if let custom = ProcessInfo.processInfo.environment["STACKSAMPLER_BUILD_DIR"], !custom.isEmpty {
            return custom
        }
        return PackagePaths.root + "/.build/release"
    }

    /// Path of `libStackSamplerPreload.so`; throws if it has not been built.
    static func preloadLibrary() throws -> String {
        try existing("libStackSamplerPreload.so")
    }

    /// Path of the `stacksampler` CLI; throws if it has not been built.
    static func cli() throws -> String {
        try existing("stacksampler")
    }

    /// The directory of copies of the preload library, its Swift part and the CLI that any user
    /// can read (CI's clone may sit in a folder an ordinary user cannot enter), made once per run.
    static func readableByAll() throws -> String {
        try copies.withLock { made in
            if let made { return made }
            let target = ScratchDirectory.run + "/products"
            try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
            // Every folder above must let other users through, or nothing below is theirs to run.
            var folder = ScratchDirectory.run
            while folder.count > 1 {
                var info = stat()
                guard stat(folder, &info) == 0, info.st_mode & 0o001 != 0 else {
                    throw HarnessError("\(folder) cannot be entered by other users, so the tests that run as an ordinary user cannot run below it; set TMPDIR to a folder every user can enter (such as /tmp)")
                }
                folder = (folder as NSString).deletingLastPathComponent
            }
            for name in ["libStackSamplerPreload.so", "libStackSamplerPreloadSwift.so", "stacksampler"] {
                let copy = target + "/" + name
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: try existing(name), toPath: copy)
                chmod(copy, 0o755)
            }
            chmod(target, 0o755)
            made = target
            return target
        }
    }

    private static let copies = Mutex<String?>(nil)

    /// `name` inside the build directory, or a clear error telling how to build it.
    private static func existing(_ name: String) throws -> String {
        let path = directory + "/" + name
        guard FileManager.default.fileExists(atPath: path) else {
            throw HarnessError(
                "StackSampler is not built: \(path) is missing; run Scripts/test.sh (or swift build -c release) first"
                    + " (or point STACKSAMPLER_BUILD_DIR at the build directory)")
        }
        return path
    }
}
