import Foundation
import Testing
@testable import StackSampler

extension SymbolTests {
    /// Readable Swift names, checked against the toolchain's `swift demangle --simplified`.
    @Suite struct SwiftNameForms {
        /// `swift demangle` of each symbol, in order, with `options`.
        static func demangle(_ symbols: [String], options: [String]) throws -> [String] {
            let input = FileManager.default.temporaryDirectory.appendingPathComponent("ss-swift-names-\(UUID().uuidString)")
            try (symbols.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: input) }
            let output = try NativeScratch.run("/bin/sh", ["-c", "swift demangle --compact \(options.joined(separator: " ")) < '\(input.path)'"])
            return output.split(separator: "\n", omittingEmptySubsequences: false).prefix(symbols.count).map(String.init)
        }

        /// The Swift function symbols of `binary`.
        static func swiftFunctions(_ binary: String) throws -> [String] {
            try NativeScratch.run("/usr/bin/nm", ["--defined-only", binary]).split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count == 3, ["T", "t"].contains(fields[1]), fields[2].hasPrefix("$s") else { return nil }
                return String(fields[2])
            }
        }

        @Test("libswiftCore's functions get the names swift-demangle --simplified gives for more than 96 %, a specialization named as the function it specializes")
        func swiftCoreMatchesTheToolchainsSimplifiedForm() throws {
            let core = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"
            let symbols = Array(Set(try Self.swiftFunctions(core))).sorted()
            try #require(symbols.count > 1000)
            let full = try Self.demangle(symbols, options: [])
            let simplified = try Self.demangle(symbols, options: ["--simplified"])
            var mismatches: [String] = []
            var folded = 0
            for (fullName, expected) in zip(full, simplified) {
                let kept = SwiftNames.readable(fullName, keepingSpecializations: true)
                if kept != expected { mismatches.append("\(fullName)\n  ours:     \(kept)\n  expected: \(expected)") }
                // By default a specialization is named as the function it specializes.
                if expected.hasPrefix("specialized "), kept == expected {
                    #expect(SwiftNames.readable(fullName) == String(expected.dropFirst("specialized ".count)))
                    folded += 1
                }
            }
            // Key path accessors, some witness-table thunks and generic signatures of local
            // functions are not rewritten like the toolchain does; none is a function that does work.
            let rate = Double(symbols.count - mismatches.count) / Double(symbols.count)
            #expect(rate > 0.96, "\(mismatches.count) of \(symbols.count) differ, e.g.\n\(mismatches.prefix(10).joined(separator: "\n"))")
            #expect(folded > 100)
        }

        /// Forms that profiles of Swift code show most, from a program compiled here.
        @Test("the common forms of a Swift program compiled here (methods, statics, getters, generics, closures, async) get the names swift-demangle --simplified gives")
        func commonFormsOfACompiledProgram() throws {
            let scratch = try NativeScratch()
            defer { scratch.remove() }
            let source = scratch.path("names.swift")
            try Self.programSource.write(toFile: source, atomically: true, encoding: .utf8)
            let binary = scratch.path("names")
            try NativeScratch.run("/bin/sh", ["-c", "swiftc -O -parse-as-library -module-name names -o '\(binary)' '\(source)'"])
            let symbols = try Self.swiftFunctions(binary)
            let full = try Self.demangle(symbols, options: [])
            let simplified = try Self.demangle(symbols, options: ["--simplified"])
            var seen = Set<String>()
            for (fullName, expected) in zip(full, simplified) {
                #expect(SwiftNames.readable(fullName, keepingSpecializations: true) == expected, "\(fullName)")
                seen.insert(SwiftNames.readable(fullName))
            }
            // The shapes this test is about are all there.
            for name in ["Matrix.multiply(_:)", "Matrix.scaled(by:times:)", "static Matrix.identity(size:)",
                         "Matrix.count.getter", "largest<A>(_:)", "work()", "partial apply for closure #1 in Matrix.scaled(by:times:)", "Sequence.map<A, B>(_:)"] {
                #expect(seen.contains(name), "\(name) not among \(seen.sorted())")
            }
        }

        static let programSource = """
        struct Matrix {
            var values: [Double]
            @inline(never) func multiply(_ other: Matrix) -> Matrix { Matrix(values: zip(values, other.values).map { $0 * $1 }) }
            @inline(never) func scaled(by factor: Double, times: Int) -> Matrix {
                Matrix(values: apply({ v in v * factor * Double(times) }, to: values))
            }
            @inline(never) static func identity(size: Int) -> Matrix { Matrix(values: Array(repeating: 1, count: size)) }
            var count: Int { @inline(never) get { values.count } }
        }
        @inline(never) func apply(_ function: @escaping (Double) -> Double, to values: [Double]) -> [Double] {
            values.map(function)
        }
        @inline(never) func largest<T: Comparable>(_ values: [T]) -> T? { values.max() }
        @inline(never) func work() async -> Int { await Task.yield(); return 1 }
        @main struct App {
            static func main() async {
                let m = Matrix.identity(size: 3)
                print(m.multiply(m).scaled(by: 2, times: 1).count, largest([1, 2, 3]) ?? 0, largest(["a"]) ?? "", await work())
            }
        }
        """
    }
}
