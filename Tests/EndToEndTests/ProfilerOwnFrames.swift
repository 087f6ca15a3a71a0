/// The profiler's own code, which no profile may show, in any mode or privilege: its signal
/// handlers, its C engine (every function of which is named `ss_…`), and the code its own
/// threads run (the sampler, the daemon, the pushers). API frames a program calls itself
/// (`Profiler.start`, `stacksampler_stop`) are the program's calls, and are not among them.
/// Every folded profile the end-to-end tests read is checked against these (FoldedProfile).
enum ProfilerOwnFrames {
    /// The engine's signal handlers and the functions of its own that a program thread runs.
    private static let handlerNames: Set<String> = ["on_sample_signal", "record_sample", "on_fault", "stacksampler_thread_trampoline", "thread_ends"]

    /// Whether `frame`, a folded profile's frame name, is the profiler's own code.
    static func contains(_ frame: String) -> Bool {
        handlerNames.contains(frame) || frame.hasPrefix("ss_") || frame.hasPrefix("libStackSamplerPreload")
            || frame.contains("SamplerThread") || frame.contains("StackSamplerDaemon.") || frame.contains("WallScheduler")
    }
}
