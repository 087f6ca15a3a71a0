import Testing
import StackSampler
@testable import stacksampler

/// The table `stacksampler top` draws, from collapsed stacks.
@Suite struct TopTableTests {
    @Test("self and total samples per function: recursion counted once, thread roots are not functions")
    func selfAndTotalPerFunctionCountRecursionOnceAndSkipThreadRoots() throws {
        let folded = """
            [main tid=1];main;work;hot 30
            [main tid=1];main;work 10
            [worker tid=2];main;idle 50
            [worker tid=2];main;rec;rec;rec 10
            """
        let table = try TopTable(folded: folded)
        #expect(table.sampleCount == 100)
        let rows = Dictionary(uniqueKeysWithValues: table.rows.map { ($0.name, ($0.selfSamples, $0.totalSamples)) })
        #expect(rows["idle"]! == (50, 50))
        #expect(rows["hot"]! == (30, 30))
        #expect(rows["work"]! == (10, 40))
        #expect(rows["rec"]! == (10, 10))
        #expect(rows["main"]! == (0, 100))
        #expect(rows["[main tid=1]"] == nil)
        #expect(table.rows.map(\.name) == ["idle", "hot", "work", "rec", "main"])
    }

    @Test("the table shows shares, at most the limit of rows, cut to the width")
    func renderedWithSharesLimitAndWidth() throws {
        let table = try TopTable(folded: "a;b 2\na 1\n")
        #expect(table.rendered(limit: 5) == """
              %Self  %Total     Self    Total  Function
              66.7%   66.7%        2        2  b
              33.3%  100.0%        1        3  a

            """)
        let narrow = table.rendered(limit: 1, width: 20)
        #expect(narrow.split(separator: "\n").count == 2)
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 20 })
    }

    @Test("no stacks: a header alone; a line that is not collapsed stacks is refused")
    func emptyAndBadInput() throws {
        #expect(try TopTable(folded: "").rows.isEmpty)
        #expect(try TopTable(folded: "").rendered(limit: 3) == "  %Self  %Total     Self    Total  Function\n")
        #expect(throws: CollapsedStacksError.self) { try TopTable(folded: "no count here\n") }
    }
}
