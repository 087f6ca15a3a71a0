/// Where things live in the package checkout, found from this source file's own path.
enum PackagePaths {
    /// The package root (the directory holding Package.swift).
    static let root: String = {
        var components = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        components.removeLast(3)  // Tests/EndToEndTests/PackagePaths.swift
        return components.joined(separator: "/")
    }()

    /// The directory of the test programs' sources (not a SwiftPM target).
    static var programs: String { root + "/Tests/Programs" }
}
