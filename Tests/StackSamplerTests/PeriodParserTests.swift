import Testing
@testable import StackSampler

@Suite struct PeriodParserTests {
    @Test("a number with a unit (ns, us, µs, ms, s; decimals allowed) parses to its nanoseconds", arguments: [
        ("10ms", Int64(10_000_000)), ("1ms", 1_000_000), ("500us", 500_000), ("500µs", 500_000),
        ("1s", 1_000_000_000), ("2.5ms", 2_500_000), ("50000ns", 50_000), ("60s", 60_000_000_000),
    ])
    func parsesNumberWithUnit(text: String, nanoseconds: Int64) throws {
        #expect(try PeriodParser.parse(text) == .nanoseconds(nanoseconds))
    }

    @Test("a period without a number or a unit, not above zero, out of range or not a number is refused as invalid",
          arguments: ["", "10", "ms", "10parsecs", "-1ms", "0ms", "10 minutes", "1e400s", "nan ms", "10us", "61s", "1h"])
    func rejectsWhatIsNotAPeriodInRange(text: String) {
        #expect(throws: ProfilerError.invalidPeriod(text)) { try PeriodParser.parse(text) }
    }

    @Test("the error for an invalid period names the value given and an accepted form")
    func errorNamesTheValueAndTheAcceptedForm() {
        let message = ProfilerError.invalidPeriod("10parsecs").description
        #expect(message.contains("10parsecs"))
        #expect(message.contains("10ms"))
    }

    @Test("a period is written in its largest whole unit and, when in range, parses back to itself",
          arguments: [(UInt64(10_000_000), "10ms"), (500_000, "500us"), (2_000_000_000, "2s"), (1_500, "1500ns")])
    func formatsInTheLargestWholeUnit(nanoseconds: UInt64, text: String) throws {
        #expect(PeriodParser.format(nanoseconds: nanoseconds) == text)
        if nanoseconds >= 50_000 { #expect(try PeriodParser.parse(text) == .nanoseconds(Int64(nanoseconds))) }
    }
}
