import Glibc

/// The Swift runtime's exported demangler; returns a malloc'd string or nil.
@_silgen_name("swift_demangle")
private func _swiftDemangle(
    _ mangledName: UnsafePointer<CChar>?,
    _ mangledNameLength: UInt,
    _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<UInt>?,
    _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// `char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)`.
private typealias CxaDemangle = @convention(c) (
    UnsafePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int32>?
) -> UnsafeMutablePointer<CChar>?

/// Swift, Rust and C++ demangling.
enum Demangler {
    /// Demangles `symbol` and classifies it: Swift (`$s`, `_$s`, `$S`, `_$S`) through the
    /// runtime's `swift_demangle`, Rust (v0 `_R`, and legacy `_ZN…17h<hash>E`) as Rust's tools
    /// show it (`RustNames`, as `.native`), C++ (`_Z`) through `__cxa_demangle`, anything else is
    /// returned unchanged as `.native`. A name that fails to demangle is returned unchanged.
    static func demangle(_ symbol: String) -> (name: String, kind: FrameKind) {
        if isSwift(symbol) {
            return (demangleSwift(symbol) ?? symbol, .swift)
        }
        if symbol.hasPrefix("_R") || symbol.hasPrefix("_ZN"), let rust = RustNames.demangle(symbol) {
            return (rust, .native)
        }
        if symbol.hasPrefix("_Z") {
            return (demangleCxx(symbol) ?? symbol, .cpp)
        }
        return (symbol, .native)
    }

    private static func isSwift(_ symbol: String) -> Bool {
        ["$s", "_$s", "$S", "_$S"].contains { symbol.hasPrefix($0) }
    }

    private static func demangleSwift(_ symbol: String) -> String? {
        let result = symbol.withCString { _swiftDemangle($0, UInt(strlen($0)), nil, nil, 0) }
        guard let result else { return nil }
        defer { free(result) }
        return String(cString: result)
    }

    private static func demangleCxx(_ symbol: String) -> String? {
        // glibc's RTLD_DEFAULT is the null handle; libstdc++ comes with the Swift runtime.
        guard let address = dlsym(nil, "__cxa_demangle") else { return nil }
        let cxaDemangle = unsafeBitCast(address, to: CxaDemangle.self)
        var status: Int32 = 0
        let result = symbol.withCString { cxaDemangle($0, nil, nil, &status) }
        guard let result else { return nil }
        defer { free(result) }
        return status == 0 ? String(cString: result) : nil
    }
}
