import CEngineHeader

extension Profile {
    /// How the samples of Swift jobs fared: their async callers (the task's chain of async
    /// contexts) recorded, or the machine stack kept, and why.
    public struct AsyncStacks: Sendable, Hashable {
        /// Samples of Swift jobs whose async callers were recorded.
        public var recorded = 0
        /// Samples that kept the machine stack because the context register was unknown in the
        /// async function's frame (a frame below it whose unwind rules lose r14).
        public var contextUnknown = 0
        /// Samples that kept the machine stack because a context could not be read.
        public var unreadable = 0
        /// Samples that kept the machine stack because a resume function lay outside every module's code.
        public var outsideCode = 0
        /// Samples that kept the machine stack because the chain came back to an earlier context.
        public var cycles = 0
        /// Samples that kept the machine stack because the chain was deeper than the room left.
        public var tooDeep = 0
        /// Whether the process's Swift concurrency runtime is one the engine does not read
        /// (its layout version, or -1 when it has none, in `layoutVersion`).
        public var runtimeUnsupported = false
        /// The runtime's `_swift_concurrency_debug_internal_layout_version`; -1 if unknown or absent.
        public var layoutVersion: Int64 = -1

        /// Samples of Swift jobs that kept the machine stack.
        public var fellBack: Int { contextUnknown + unreadable + outsideCode + cycles + tooDeep }

        /// The engine's counts now (it counts for the life of the process: a span's are the
        /// difference of two, `since`).
        static func engine() -> AsyncStacks {
            var counts = [UInt64](repeating: 0, count: Int(SS_ASYNC_OUTCOMES))
            ss_async_statistics(&counts)
            func count(_ outcome: Int32) -> Int { Int(counts[Int(outcome)]) }
            var version: Int64 = -1
            let status = ss_async_runtime_status(&version)
            return AsyncStacks(recorded: count(Int32(SS_ASYNC_COMPLETE)), contextUnknown: count(Int32(SS_ASYNC_NO_CONTEXT)),
                               unreadable: count(Int32(SS_ASYNC_UNREADABLE)), outsideCode: count(Int32(SS_ASYNC_NOT_CODE)),
                               cycles: count(Int32(SS_ASYNC_CYCLE)), tooDeep: count(Int32(SS_ASYNC_TOO_DEEP)),
                               runtimeUnsupported: status == Int32(SS_ASYNC_RUNTIME_UNSUPPORTED), layoutVersion: version)
        }

        /// These counts less `start`'s, the runtime's status as these say.
        func since(_ start: AsyncStacks) -> AsyncStacks {
            var span = self
            span.recorded -= start.recorded
            span.contextUnknown -= start.contextUnknown
            span.unreadable -= start.unreadable
            span.outsideCode -= start.outsideCode
            span.cycles -= start.cycles
            span.tooDeep -= start.tooDeep
            return span
        }

        /// The summary's line on async stacks, or nil when no sample was a Swift job and the runtime is not refused.
        var summaryLine: String? {
            if runtimeUnsupported {
                let version = layoutVersion < 0 ? "no layout version" : "layout version \(layoutVersion)"
                return "async stacks: off, the Swift concurrency runtime loaded has \(version) (checked: 1, Swift 6.3); Swift jobs show their machine stacks"
            }
            guard recorded + fellBack > 0 else { return nil }
            return "async stacks: \(recorded) samples of Swift jobs with their async callers; \(fellBack) kept the machine stack "
                + "(\(contextUnknown) context register unknown, \(unreadable) unreadable contexts, \(outsideCode) resume functions outside code, "
                + "\(cycles) cycles, \(tooDeep) too deep)"
        }
    }
}
