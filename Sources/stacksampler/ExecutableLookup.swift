import Foundation
import StackSampler

/// Finding the program to run.
enum ExecutableLookup {
    /// The path of `name`: itself if it contains a slash, else the first executable match in PATH.
    static func find(_ name: String) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        return nil
    }
}

/// Where the preload library is: beside this executable (the build folder), in
/// `../lib/stacksampler/` from it (a prefix `Scripts/install.sh` made), or `STACKSAMPLER_PRELOAD_LIBRARY`.
enum PreloadLibrary {
    static let fileName = "libStackSamplerPreload.so"

    /// The library's absolute path; throws with what to do when it is missing.
    static func locate() throws -> String {
        if let explicit = SettingEnvironment.process.text(SessionSettings.preloadLibraryVariable) { return explicit }
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidates = [folder.appendingPathComponent(fileName).path,
                          folder.deletingLastPathComponent().appendingPathComponent("lib/stacksampler/" + fileName).path]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw ValidationErrorText("\(fileName) not found at \(candidates.joined(separator: " or ")); build it with swift build -c release, install it with Scripts/install.sh, or set \(SessionSettings.preloadLibraryVariable)")
        }
        return found
    }
}
