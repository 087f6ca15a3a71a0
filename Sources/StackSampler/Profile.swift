/// The result of one profiling session: unique stacks with their counts,
/// per-thread figures, every loss, and names for every address.
public struct Profile: Sendable {
    /// One unique call stack of one thread.
    public struct Stack: Sendable, Hashable {
        /// Index into `threads`.
        public var thread: Int
        /// Code addresses, root first; the last one is where the thread was.
        public var addresses: [UInt]
        /// Samples with exactly this stack.
        public var count: Int
        /// Why the stack stops short of its thread's first frame, if it does: the frames on the
        /// root side of `addresses` are not known.
        public var cut: StackCut?

        /// The stack was deeper than the maximum depth and is cut at the root side.
        @available(*, deprecated, message: "use cut == .depth; a stack may stop short for other reasons too (cut)")
        public var isTruncated: Bool { cut == .depth }

        /// A stack from its parts.
        package init(thread: Int, addresses: [UInt], count: Int, cut: StackCut? = nil) {
            self.thread = thread
            self.addresses = addresses
            self.count = count
            self.cut = cut
        }
    }

    /// Why a walk stopped before the thread's first frame. Each is shown as a marker frame on the
    /// root side of the stack, and its samples are counted among the losses. The raw values are
    /// the bits of a raw recording's stack flags (`RawFormat`): `depth` is bit 0, as it was when it
    /// was the only one, so that an older reader reads the others as the whole stacks it knew.
    public enum StackCut: UInt8, Sendable, Hashable, CaseIterable {
        /// Deeper than the maximum depth: the frames nearest the root are missing (`[truncated]`).
        case depth = 1
        /// A frame without unwind information (or a rule the unwinder cannot follow): its callers
        /// are missing (`[no unwind info]`).
        case noUnwindInfo = 2
        /// Too little stack left for the handler to walk: the interrupted PC only (`[leaf only]`).
        case leafOnly = 4
        /// The walk read unmapped memory: the interrupted PC only (`[unwind fault]`).
        case fault = 8
    }

    /// One thread that was sampled or seen.
    public struct Thread: Sendable, Hashable {
        /// Kernel thread id.
        public var id: Int32
        /// Thread name (`/proc/…/comm`).
        public var name: String
        /// Samples attributed to the thread (a cpu-mode sample counts once per timer period it covers).
        public var samples: Int
        /// CPU time the thread used while profiled, in ns.
        public var cpuNanoseconds: UInt64
        /// Time between the thread's first and last sighting, in ns.
        public var observedNanoseconds: UInt64
        /// The thread blocked the profiling signal when last checked, so it could not be sampled then.
        public var blocksSignal = false
        /// Samples actually taken: what the effective rate is made of.
        public var takenSamples = 0
        /// The sum over the samples taken of the square of the periods each stands for: with
        /// `samples`, their sum, how precise the thread's shares are (`effectiveSamples`).
        public var takenWeightSquares = 0
        /// The process the thread belongs to: its pid and name (a merged process tree has several).
        public var processID: Int32 = 0
        public var processName = ""
    }

    /// Samples the profiler could not take or could not take whole.
    public struct Losses: Sendable, Hashable {
        /// Dropped because the buffer was full.
        public var droppedSamples = 0
        /// Kept with their root side cut at the maximum depth.
        public var truncatedSamples = 0
        /// Kept with only the leaf frame: the thread was interrupted with too little stack left to
        /// walk, on its alternate signal stack (in a handler of its own) or near the end of its own.
        public var leafOnlySamples = 0
        /// Kept with the frames found until the walk ended early: a frame without unwind info (JIT
        /// code, code without `.eh_frame`, a module loaded since the last table refresh) or with a
        /// rule the walk cannot follow. The stack's root side is missing.
        public var unwindFailures = 0
        /// Kept with only the leaf frame: the unwinder read unmapped memory (a corrupt or foreign stack).
        public var unwindFaults = 0
        /// Wall-mode ticks the sampler thread woke too late for; each was counted with the stacks found when it woke.
        public var missedTicks = 0
        /// Wall-mode ticks not counted in any stack, since the thread's stack then could not be
        /// known: a sleep over before it was walked, no sample near in CPU time, and so on.
        public var skippedTicks: Int {
            get { skippedTicksByReason.values.reduce(0, +) }
            set { skippedTicksByReason = newValue > 0 ? [Self.reasonNotRecorded: newValue] : [:] }
        }
        /// `skippedTicks` by reason (the reason's description); a raw recording keeps only the
        /// total, under `reasonNotRecorded`.
        public var skippedTicksByReason: [String: Int] = [:]
        /// The reason of skipped ticks whose reasons were not recorded.
        public static let reasonNotRecorded = "reasons not recorded"
        /// cpu mode: timer periods the kernel noticed late and merged into the next sample (its
        /// `si_overrun`); that sample is counted once for each, so CPU time is still attributed.
        public var overrunPeriods = 0
        /// Signals of the profiler's signal number that were not the profiler's own: passed to the program's handler.
        public var foreignSignals = 0
        /// Perf engine: what its counters counted (ns of CPU time, or events) while they ran, read
        /// as each closed; with the sample weight, the samples there would have been if every
        /// overflow had become one (the rest fell in the kernel, or were throttled or merged).
        public var countedEvents = 0
        /// Attaches refused because the process had reached its descriptor limit (`ulimit -n`): a
        /// thread the perf engine could not open a counter for is not sampled.
        public var descriptorRefusals = 0
        /// Perf engine: overflows that were no sample, left over from a counter's random first period
        /// (the kernel re-arms it with that period until the handler has set the whole one).
        public var earlyOverflows = 0
        /// Not a loss: wall mode's signals answered without a walk, since no tick could take their
        /// stack (a tick takes a running thread's last sample before it or its first after it).
        public var unwalkedSignals = 0
        /// Not a loss: wall mode's waits for a core (a thread preempted) whose ticks were counted
        /// at the stack the kernel copied where the thread was preempted: exact.
        public var preemptionsAtCopy = 0
        /// Wall mode's waits for a core whose ticks were counted at the thread's sample nearest in
        /// CPU time, for want of a copy (the kernel refused them, the thread switches often, or the
        /// copy was lost or too short): near a call's end the wait may be given to the wrong call.
        public var preemptionsAtNearestSample = 0
        /// Not a loss: wall mode's ticks of threads without a context-switch ring that no wake drew
        /// for a look (more such threads than are looked at at every tick: the wakes look at
        /// `subsampleLooksPerSecond` of them a second, in rounds that look at each once, in random
        /// order), counted at their own times
        /// with the stack the thread's last look found. Unbiased; those threads' calls are known to
        /// the gap between two looks.
        public var subsampledTicks = 0
        /// Looks a second at such threads, when `subsampledTicks` is not 0.
        public var subsampleLooksPerSecond = 0
        /// Not a loss: wall mode's context-switch rings given back because their threads switched
        /// too often (each switch of a thread with a ring costs it about 2 µs): those threads were
        /// then counted as threads without a ring, by looks, for a while (see `RingKeeping`).
        public var ringsGivenBackForSwitches = 0
        /// Not a loss: samples whose walk crossed JIT code (code without unwind info that no module
        /// accounts for: anonymous memory, code a runtime declares in `/tmp/perf-PID.map`) by its frame
        /// pointers, every step checked (see docs/design.md, How it works). Not kept in raw recordings.
        public var framePointerSamples = 0
    }

    /// What the profiler itself cost.
    public struct Overhead: Sendable, Hashable {
        /// Median and 99th percentile of the handler's time per sample, in ns (100 ns resolution).
        public var handlerMedianNanoseconds: UInt64 = 0
        public var handlerP99Nanoseconds: UInt64 = 0
        /// The handlers' time in all, in ns (each sample at the middle of its 100 ns bucket).
        public var handlerTotalNanoseconds: UInt64 = 0
        /// CPU time of the sampler thread, in ns.
        public var samplerCPUNanoseconds: UInt64 = 0
        /// Time spent naming addresses when the profile was built, in ns.
        public var symbolizationNanoseconds: UInt64 = 0
        /// Bytes of symbol and function tables the symbolizer loaded for naming addresses.
        public var symbolTableBytes = 0
    }

    /// Continuous mode: which window of the session this profile is, and what the daemon has to
    /// say of the windows before it.
    public struct Window: Sendable, Hashable {
        /// 1 for the session's first window.
        public var index: Int
        /// The configured window length, in ns (a window ends at the sampler's first wake after it).
        public var lengthNanoseconds: UInt64
        /// Windows whose profile was not built because the ones before were still being built.
        public var droppedWindows = 0
        /// CPU the daemon spent on the window before this one (naming, rendering, writing, pushing), in ns.
        public var previousDaemonNanoseconds: UInt64 = 0
        /// What the daemon reports besides: pushes sent, retried and dropped since the window before.
        public var reports: [String] = []

        /// A window's description with nothing to report yet.
        package init(index: Int, lengthNanoseconds: UInt64) {
            self.index = index
            self.lengthNanoseconds = lengthNanoseconds
        }
    }

    /// Set for the profile of one window of a continuous session.
    public var window: Window?

    /// Each stack's addresses run leaf first (`reversingStacks`): a cut's marker is shown after
    /// the outermost frame, where the missing callers are.
    package var stacksAreLeafFirst = false

    /// The profiler's own CPU time in this profile's span, in ns: sampler thread, handlers, naming
    /// this profile, and (continuous mode) the daemon's work on the window before.
    public var profilerCPUNanoseconds: UInt64 {
        overhead.samplerCPUNanoseconds + overhead.handlerTotalNanoseconds + overhead.symbolizationNanoseconds
            + (window?.previousDaemonNanoseconds ?? 0)
    }

    /// The profiled process: its pid and name (`/proc/self/comm`).
    public var processID: Int32 = 0
    public var processName: String = ""

    /// The configuration the session ran with; nil when the sampling settings are unknown (a
    /// profile read from collapsed stacks).
    public var configuration: ProfilerConfiguration?
    /// Monotonic start time and length of the session, in ns.
    public var startNanoseconds: UInt64
    public var durationNanoseconds: UInt64
    /// What produced the samples, and why that one when it was chosen automatically (empty when unknown).
    public var engine = ""
    /// cpu mode: whether the samples cover the threads' time in the kernel as well as in user space
    /// (false when the engine's counters count user space only); true when unknown.
    public var kernelTimeSampled = true
    /// The signal used, named (`SIGPROF`, `SIGRTMIN+3`; empty when unknown), and whether it
    /// replaces the mode's usual one (taken by the program).
    public var signal: String
    public var signalSubstituted: Bool
    /// Unique stacks and their counts.
    public var stacks: [Stack]
    /// Every thread seen.
    public var threads: [Thread]
    /// Names of every address that occurs in `stacks`.
    public var frames: [UInt: SymbolizedFrame]
    /// The executable mappings at the end of the session that hold a sampled address, with build ids.
    public var modules: [Module]
    /// The files of the profiler's own code (its preload libraries), whose frames are its own
    /// cost; empty when unknown or when the profiler is linked into the program.
    public var profilerModules: Set<String> = []
    /// What was lost.
    public var losses: Losses
    /// What the profiler cost.
    public var overhead = Overhead()
    /// How samples of Swift jobs fared (async callers recorded, or the machine stack kept).
    public var asyncStacks = AsyncStacks()
    /// Wall-clock time (CLOCK_REALTIME, ns since the epoch) at `startNanoseconds`.
    public var realtimeStartNanoseconds: UInt64 = 0
    /// Reconstructed function calls, by thread, start and depth; empty unless `configuration.invocations` was set.
    public var invocations: [Invocation] = []
    /// Calls still running at the end of the profile's span (a continuous window, a request's
    /// span), their duration so far; each is reported whole in the window where it ends.
    public var runningInvocations: [Invocation] = []
    /// What invocation tracking kept, left out and lost.
    public var invocationCounts = InvocationCounts()
    /// The profiled command line, for titles ("" when unknown).
    public var command = ""

    /// Total samples.
    public var sampleCount: Int { stacks.reduce(0) { $0 + $1.count } }

    /// Samples per second each thread achieved (per CPU-second in cpu mode, per wall-second in wall mode).
    public func effectiveRate(of thread: Thread) -> Double {
        guard let configuration else { return 0 }
        let basis = configuration.mode == .cpu ? thread.cpuNanoseconds : thread.observedNanoseconds
        return basis > 0 ? Double(thread.takenSamples) / (Double(basis) / 1e9) : 0
    }

    /// How many samples of one period each would make shares as precise as the samples of
    /// `threads` do, each weighed by the periods it stands for (Kish's effective sample size:
    /// the sum of the weights squared over the sum of their squares). A few heavy samples make a
    /// share as noisy as a few samples do; equal weights give the samples taken.
    public static func effectiveSamples(of threads: [Thread]) -> Double {
        let weights = threads.reduce(0) { $0 + $1.samples }, squares = threads.reduce(0) { $0 + $1.takenWeightSquares }
        return squares > 0 ? Double(weights) * Double(weights) / Double(squares) : 0
    }

    /// The name of an address ("module+0xOFFSET" when no symbol covers it).
    public func name(of address: UInt) -> String {
        frames[address]?.name ?? "[unknown]"
    }
}

extension Profile.Thread {
    /// A thread from its figures; it did not block the signal, and its process is unknown.
    package init(id: Int32, name: String, samples: Int, cpuNanoseconds: UInt64, observedNanoseconds: UInt64) {
        self.init(id: id, name: name, samples: samples, cpuNanoseconds: cpuNanoseconds, observedNanoseconds: observedNanoseconds,
                  blocksSignal: false)
    }
}

extension Profile {
    /// A profile from its parts, with nothing lost: one built by hand.
    package init(configuration: ProfilerConfiguration?, startNanoseconds: UInt64, durationNanoseconds: UInt64, signal: String,
                 signalSubstituted: Bool, stacks: [Stack], threads: [Thread], frames: [UInt: SymbolizedFrame], modules: [Module]) {
        self.init(configuration: configuration, startNanoseconds: startNanoseconds, durationNanoseconds: durationNanoseconds,
                  signal: signal, signalSubstituted: signalSubstituted, stacks: stacks, threads: threads, frames: frames,
                  modules: modules, losses: Losses())
    }
}
