import Foundation
import Testing
@testable import StackSampler

/// glibc's `int backtrace(void **buffer, int size)` (execinfo.h is not in the Glibc module).
private typealias Backtrace = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32

extension SymbolTests {
    /// A Swift type whose method is symbolized from inside itself.
    struct Matrix {
        var values: [Double]

        /// Returns the call stack's return addresses, taken inside this method.
        @inline(never)
        func multiply(_ other: Matrix) -> [UInt] {
            guard let symbol: UnsafeMutableRawPointer = dlsym(nil, "backtrace") else { return [] }
            let backtrace = unsafeBitCast(symbol, to: Backtrace.self)
            var frames = [UnsafeMutableRawPointer?](repeating: nil, count: 8)
            let count = Int(backtrace(&frames, Int32(frames.count)))
            return frames[0..<count].map { UInt(bitPattern: $0) }
        }
    }

    @Suite struct Demangling {
        @Test("an Itanium C++ name demangles to its readable form, as C++")
        func cxxNames() {
            let result = Demangler.demangle("_ZN3foo3barEv")
            #expect(result.name == "foo::bar()")
            #expect(result.kind == .cpp)
        }

        @Test("a plain C name is kept as native; a C++ name that does not demangle is kept as it is, as C++")
        func plainAndUndemanglableNames() {
            #expect(Demangler.demangle("memcpy") == ("memcpy", .native))
            #expect(Demangler.demangle("_Znot valid").kind == .cpp)
            #expect(Demangler.demangle("_Znot valid").name == "_Znot valid")
        }

        @Test("a Swift method of this process is named without module, argument or return types, its full name kept beside")
        func swiftMethodSymbolizedFromThisProcess() throws {
            let matrix = Matrix(values: [1, 2])
            let returnAddresses = matrix.multiply(matrix)
            // backtrace()'s first entry is the return address into its caller, `multiply`.
            let inside = try #require(returnAddresses.first) - 1
            let frame = Symbolizer(modules: .current()).symbolize(inside)
            // Readable by default: no module, argument or return types; the full form is kept.
            #expect(frame.name == "SymbolTests.Matrix.multiply(_:)", "got \(frame.name)")
            #expect(frame.fullName.hasPrefix("StackSamplerTests.SymbolTests.Matrix.multiply(StackSamplerTests.SymbolTests.Matrix) -> "),
                    "got \(frame.fullName)")
            #expect(frame.kind == .swift && frame.isResolved)
        }
    }
}
