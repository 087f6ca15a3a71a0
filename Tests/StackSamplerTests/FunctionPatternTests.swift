import Testing
@testable import StackSampler

@Suite struct FunctionPatternTests {
    static let names = ["main", "parse_request", "render_response", "Matrix.multiply(_:)", "request"]

    @Test("a pattern without wildcards matches the names that contain it")
    func withoutWildcardsItIsASubstring() {
        #expect(Self.names.filter(FunctionPattern("request").matches) == ["parse_request", "request"])
    }

    @Test("a glob with * and ? must match the whole name")
    func globMatchesTheWholeName() {
        #expect(Self.names.filter(FunctionPattern("*_re*").matches) == ["parse_request", "render_response"])
        #expect(Self.names.filter(FunctionPattern("re*").matches) == ["render_response", "request"])
        #expect(Self.names.filter(FunctionPattern("ma??").matches) == ["main"])
        #expect(Self.names.filter(FunctionPattern("*(_:)").matches) == ["Matrix.multiply(_:)"])
        #expect(Self.names.filter(FunctionPattern("*").matches) == Self.names)
        #expect(Self.names.filter(FunctionPattern("*e*e*e*").matches) == ["parse_request", "render_response"])
        #expect(Self.names.filter(FunctionPattern("*e*e*e*e*").matches) == ["render_response"])
    }
}
