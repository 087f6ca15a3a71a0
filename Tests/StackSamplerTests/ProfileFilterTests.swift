import Testing
import StackSampler

/// 100 samples on two threads, with per-thread roots as `record --per-thread` writes them.
private let input = """
    [main tid=1];main;parse;lex 30
    [main tid=1];main;parse 10
    [main tid=1];main;render;lex 20
    [worker tid=2];run;compress 35
    [worker tid=2];run;poll 5
    """

/// `profile` as folded lines, threads kept apart.
private func folded(_ profile: Profile) -> [String] {
    String(decoding: profile.rendered(as: .folded, options: ExportOptions(perThreadRoots: true)), as: UTF8.self)
        .split(separator: "\n").map(String.init)
}

private func profile() throws -> Profile {
    try Profile(collapsedStacks: input, command: "input.folded")
}

@Suite struct ProfileFilterTests {
    @Test("folded stacks with thread roots import as their threads with their samples and write back as the same lines")
    func importKeepsThreadsAndRoundTripsToTheSameLines() throws {
        let profile = try profile()
        #expect(profile.threads.map(\.name) == ["main", "worker"])
        #expect(profile.threads.map(\.id) == [1, 2])
        #expect(profile.threads.map(\.samples) == [60, 40])
        #expect(folded(profile) == input.split(separator: "\n").map(String.init).sorted())
    }

    @Test("keeping stacks keeps those with a matching frame, and only those")
    func includeKeepsStacksWithAMatchingFrame() throws {
        #expect(try folded(profile().keepingStacks { $0.contains(/^lex$/) }) == [
            "[main tid=1];main;parse;lex 30",
            "[main tid=1];main;render;lex 20",
        ])
    }

    @Test("removing stacks drops every stack with a matching frame and keeps the others whole")
    func excludeDropsStacksWithAMatchingFrame() throws {
        #expect(try folded(profile().removingStacks { $0.contains(/^(poll|render)$/) }) == [
            "[main tid=1];main;parse 10",
            "[main tid=1];main;parse;lex 30",
            "[worker tid=2];run;compress 35",
        ])
    }

    @Test("a thread is selected by its name or its tid; a name no thread has selects nothing")
    func threadSelectsByNameOrTid() throws {
        let byName = try folded(profile().keepingThreads(named: "worker"))
        #expect(byName == ["[worker tid=2];run;compress 35", "[worker tid=2];run;poll 5"])
        #expect(try folded(profile().keepingThreads(named: "2")) == byName)
        #expect(try folded(profile().keepingThreads(named: "nobody")).isEmpty)
    }

    @Test("reversed stacks put each leaf first with its callers under it, under the same thread root")
    func reverseShowsCallersUnderEachLeaf() throws {
        #expect(try folded(profile().reversingStacks()) == [
            "[main tid=1];lex;parse;main 30",
            "[main tid=1];lex;render;main 20",
            "[main tid=1];parse;main 10",
            "[worker tid=2];compress;run 35",
            "[worker tid=2];poll;run 5",
        ])
    }

    @Test("reversed, a stack that stops short shows its marker after its outermost frame, so that its leaf merges with the others; its outer frames trimmed, the marker goes")
    func reversedCutStacksKeepTheirMarkerWhereTheCallersAreMissing() throws {
        let profile = try Profile(collapsedStacks: """
            [main tid=1];main;parse;lex 30
            [main tid=1];[no unwind info];parse;lex 10
            [main tid=1];[no unwind info];render;parse;lex 5
            [main tid=1];[leaf only];lex 5
            """, command: "input.folded")
        let reversed = profile.reversingStacks()
        #expect(folded(reversed) == [
            "[main tid=1];lex;[leaf only] 5",
            "[main tid=1];lex;parse;[no unwind info] 10",
            "[main tid=1];lex;parse;main 30",
            "[main tid=1];lex;parse;render;[no unwind info] 5",
        ])
        #expect(folded(reversed.reversingStacks()) == folded(profile))
        // Under 25 %: render (10 %). That stack then ends at parse because render was cut off, not
        // because its callers are unknown: no marker.
        #expect(folded(reversed.trimmingPaths(below: 25, options: ExportOptions(perThreadRoots: true))) == [
            "[main tid=1];lex;[leaf only] 5",
            "[main tid=1];lex;parse 5",
            "[main tid=1];lex;parse;[no unwind info] 10",
            "[main tid=1];lex;parse;main 30",
        ])
    }

    @Test("a minimum share cuts the narrower paths and leaves their samples with the caller where they were cut")
    func minPercentCutsNarrowPathsAndKeepsTheirSamplesWithTheCaller() throws {
        let trimmed = try profile().trimmingPaths(below: 25, options: ExportOptions(perThreadRoots: true))
        #expect(folded(trimmed) == [
            "[main tid=1];main 20",
            "[main tid=1];main;parse 10",
            "[main tid=1];main;parse;lex 30",
            "[worker tid=2];run 5",
            "[worker tid=2];run;compress 35",
        ])
        #expect(trimmed.sampleCount == 100)
    }

    @Test("function costs count self samples at the leaf and total samples once per stack even in a recursion, ordered by self then total")
    func functionCostsCountSelfAndTotalOncePerStack() throws {
        let costs = try profile().functionCosts()
        #expect(costs.map(\.name) == ["lex", "compress", "parse", "poll", "main", "run", "render"])
        #expect(costs.map(\.selfSamples) == [50, 35, 10, 5, 0, 0, 0])
        #expect(costs.map(\.totalSamples) == [50, 35, 40, 5, 60, 40, 20])
        let recursive = try Profile(collapsedStacks: "a;b;a 10\na 5", command: "").functionCosts()
        #expect(recursive == [FunctionCost(name: "a", selfSamples: 15, totalSamples: 15),
                              FunctionCost(name: "b", selfSamples: 0, totalSamples: 10)])
    }

    @Test("the top table lists the first functions by self samples, with their counts and shares of the whole")
    func topTableListsTheFunctionsWithTheirShares() throws {
        let lines = try profile().topTable(limit: 2).split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.count == 3)
        #expect(lines[0] == ["self", "self%", "total", "total%", "function"])
        #expect(lines[1] == ["50", "50.00%", "50", "50.00%", "lex"])
        #expect(lines[2] == ["35", "35.00%", "35", "35.00%", "compress"])
    }

    @Test("a line of collapsed stacks without a count is refused with its line number and text")
    func collapsedStacksErrorsNameTheLine() {
        let error = #expect(throws: CollapsedStacksError.self) {
            try Profile(collapsedStacks: "a 1\n# comment\na;b many\n", command: "")
        }
        #expect(error?.line == 3)
        #expect(error?.text == "a;b many")
    }
}
