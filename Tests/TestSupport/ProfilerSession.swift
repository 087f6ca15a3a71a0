import Testing

/// One profiler session at a time in the test process.
///
/// `Profiler` runs one session per process, and every test target's tests run in the same test
/// process, in parallel: a test that starts a session takes this trait, which holds its test
/// until no other test holding it runs. On a suite it applies to each of the suite's tests.
package struct ProfilerSessionTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        await ProfilerSessionTurn.shared.take()
        do {
            try await function()
        } catch {
            await ProfilerSessionTurn.shared.hand()
            throw error
        }
        await ProfilerSessionTurn.shared.hand()
    }
}

extension Trait where Self == ProfilerSessionTrait {
    /// The test (each test of the suite) runs while no other test holding this trait runs.
    package static var profilerSession: Self { ProfilerSessionTrait() }
}

/// Whose turn it is to run a session: the tests waiting, in arrival order.
private actor ProfilerSessionTurn {
    static let shared = ProfilerSessionTurn()
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns once the caller has the turn.
    func take() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives the turn to the next test waiting, if any.
    func hand() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
