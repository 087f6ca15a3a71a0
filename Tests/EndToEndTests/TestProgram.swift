import Foundation
import Synchronization

/// A workload from Tests/Programs, compiled on first use and cached for the rest of the run.
enum TestProgram: String, CaseIterable, Sendable {
    /// Single-threaded; CPU in `work_fifty` / `work_thirty` / `work_twenty`, 50/30/20, self-measured.
    case split
    /// Eight threads named `worker-N`, each spinning in `worker_N`.
    case threads
    /// Installs its own SIGPROF handler and ITIMER_PROF; reports the handler's calls.
    case ownSigprof = "own_sigprof"
    /// Blocks SIGPROF in both its threads and takes its own ITIMER_PROF's signals by signalfd and
    /// the sigwait family; reports what it read, and what was not the kernel's.
    case sigprofReader = "sigprof_reader"
    /// A thread that works with about 5 KiB of its stack left, with a 1 kHz SIGALRM handler of its own.
    case smallStack = "small_stack"
    /// Exits with the status given as its argument.
    case exitStatus = "exit_status"
    /// The main thread ends by pthread_exit before its three workers (`worker_spin`, then
    /// `worker_nap`), or after them with `main-last`; the process ends with the last thread.
    case mainExitsFirst = "main_exits_first"
    /// Swift; spends its time in `Matrix.multiply(_:)`.
    case matrix
    /// C++; dlopen/dlclose, exceptions and dl_iterate_phdr on three threads at once.
    case loaderChurn = "loader_churn"
    /// The shared library loader_churn opens and closes.
    case plugin
    /// SIGSEGV the program handles itself, one it does not, and code without unwind info.
    case faults
    /// Recursion 100,000 frames deep.
    case deep
    /// Sleeping threads (EINTR counts) and a thread that blocks SIGPROF.
    case sleepers
    /// A pool of threads asleep in turns of 30 ms in `pool_wait_long` and 10 ms in
    /// `pool_wait_short`, each timing its sleeps: SECONDS THREADS.
    case threadPool = "thread_pool"
    /// Two threads handing a token back and forth through a futex, spinning a few microseconds
    /// in `handoff_spin` between handings and waiting in `handoff_wait`: SECONDS SPIN_US; prints
    /// `handings`, and `spin_ms` and `wait_ms` as the threads timed them.
    case handoff
    /// Blocks every signal while it works (`masked_work`), then waits 1 ms with its old mask set
    /// for the wait alone (ppoll, pselect, epoll_pwait, sigsuspend); counts the waits cut short.
    case maskedWaits = "masked_waits"
    /// Threads that burn 100 us between 1 ms poll, select and epoll_wait calls (EINTR counts), and a
    /// thread that spins half the run timing its own life.
    case bursts
    /// One thread alternating 300 us spins (`spin_between_naps`) and 200 us sleeps (`short_nap`),
    /// each timed by the wall clock.
    case shortNaps = "short_naps"
    /// Threads started one at a time after the profiler has settled into long batches, each
    /// spinning 200 ms in `late_spin` and timing itself.
    case lateThreads = "late_threads"
    /// Thousands of short-lived threads; counts the process's POSIX timers.
    case churn
    /// Two raw clone threads on the same tid (run as pid 1 of a new pid namespace): `first_spin`, then `reused_spin`.
    case tidReuse = "tid_reuse"
    /// Counts the profiler's descriptors of a kind (counters, or wall mode's held /proc files, with
    /// threads sleeping meanwhile) and a forked child's, shares a file at such a number with a
    /// forked child, then closes every descriptor above 2 and works on, writing a file of its own.
    case profilerFds = "profiler_fds"
    /// THREADS waiting threads, then FILES descriptors (0: until refused), and select() on the
    /// highest; built with _FORTIFY_SOURCE (an FD_SET past FD_SETSIZE aborts).
    case fdHeadroom = "fd_headroom"
    /// Runs a command with perf_event_open refused by a seccomp filter (an errno, or a kill).
    case denyPerfEvents = "deny_perf_events"
    /// Runs a command behind a seccomp filter that allows only the listed system calls and kills for any other.
    case allowOnly = "allow_only"
    /// Touches 100,000 fresh pages in `touch_pages`; reports its page faults.
    case pageFaults = "page_faults"
    /// Forks children with known exit statuses, and one that execs /bin/true.
    case forker
    /// Forks children one by one while two threads hold the loader's lock in dl_iterate_phdr;
    /// waits for each at most 5 s and counts the hung (see its header).
    case forkLoader = "fork_loader"
    /// Runs threads, then creates thread-specific keys until the C library refuses; prints how
    /// many it got and whether threads made then could use every one.
    case keyHoarder = "key_hoarder"
    /// Execs itself in a chain, forks rounds of children (half exec), vforks, execs from a
    /// second thread, a failed exec, an exec with SIGPROF ignored; exits 0 when all went as
    /// expected (see its header).
    case execer
    /// Dies without running exit handlers: _exit, abort, SIGSEGV, or waits to be killed.
    case victim
    /// Single-threaded; half its CPU in `read_zero` (read(2) of /dev/zero, mostly in the kernel), half
    /// in `spin_user`, self-measured (`measured NAME SHARE`, `kernel_share SHARE`).
    case syscalls
    /// Stripped; CPU in the static functions `hot_one` / `hot_two` / `hot_three`, 50/30/20.
    /// Its unstripped build is `unstrippedExecutable()`.
    case stripped
    /// Single-threaded calls of known, self-measured durations: three phases from one caller,
    /// recursion ten deep, one function called twice with a gap; prints `call NAME MS` per call.
    case invocations
    /// A thread named `blocker` blocks for the given seconds in `blocked_wait`, then says `blocker: woke` on stderr.
    case stall
    /// Profiles a region of itself through the C API, linked against the preload library.
    case cAPI = "c_api"
    /// Samples itself through the C API at 1 ms (wall) and execs itself N times while sampling.
    case cAPIExec = "c_api_exec"
    /// 1,000 sessions in a row through the C API, threads made during and between them;
    /// counts timers, descriptors, threads and resident memory. Linked like `cAPI`.
    case sessions
    /// Built with DWARF (`-g`); CPU in `hot_function`, in code inlined from `inner_helper` and `burn_cpu`.
    case inlined
    /// Three workers spinning in `worker_main` before the program starts sampling itself through
    /// the C API; writes the folded profile to its argument. Built with frame pointers.
    case threadsBeforeStart = "threads_before_start"
    /// `threadsBeforeStart` built without frame pointers.
    case threadsBeforeStartNoFramePointers = "threads_before_start_nofp"
    /// Swift; Dispatch workers and a pthread spinning before the C API's start (Profiler.start).
    case threadsBeforeStartSwift = "threads_before_start_swift"
    /// Three threads with an 8 KiB alternate signal stack and a SA_ONSTACK handler of their own.
    case smallAltstack = "small_altstack"
    /// Uses libunwind itself (flushes its cache, unw_backtrace) beside dl_iterate_phdr callbacks.
    case ownLibunwind = "own_libunwind"
    /// dlopens the plugin and closes it with libc's own dlclose, around the interposed one.
    case hiddenDlclose = "hidden_dlclose"
    /// Rust; three threads spinning in `middle` -> `leaf`, each with Rust's 8 KiB alternate signal stack.
    case rustThreads = "rust_threads"
    /// `rustThreads` with v0 symbol mangling (`_R…`).
    case rustThreadsV0 = "rust_threads_v0"
    /// `maps`: prints the shared objects mapped into it; `null`: prints its caught-signal mask and
    /// crash-signal dispositions, then dies of a null-pointer write.
    case crash
    /// Swift; prints its caught-signal mask (the Swift runtime's crash backtracer's handlers).
    case swiftSignals = "swift_signals"
    /// Sets a SIGPROF handler with the way named by its argument (sigset, sysv_signal…) and reports what it saw.
    case dispositionSetters = "disposition_setters"
    /// Signals meeting the signal machinery half-way: siginterrupt, a bad sigaction pointer,
    /// concurrent sigaction writers, SIGSEGV sent during samples.
    case signalRaces = "signal_races"
    /// Worker threads serving requests through call chains of random depth into `serve_hot` for
    /// the given seconds; reports its CPU in serve_hot and its own resident size (see its header).
    case windowService = "window_service"
    /// Swift concurrency: task groups run, each under withTaskCancellationHandler as a server's connections do,
    /// `outerRequest` -> `middleStage` -> `leafWork` x3 -> `burn`, then
    /// `outerRequest` -> `otherStage` -> `burn`, `outerRequest` -> `loopStage` -> `step` (awaited in a loop), with
    /// Task.yield, Task.sleep, an actor hop and a @MainActor call.
    case asyncStages = "async_stages"
    /// `asyncStages` sampling itself at 1 ms through the C API (Profiler.start): ROUNDS MODE PROFILE.
    case asyncStagesSelf = "async_stages_self"
    /// A service: spins in `serve_hot` until file STOP exists or SECONDS pass, then exits 3: STOP SECONDS PIDFILE.
    case service
    /// Closes descriptors 3-1023, passes 300 messages through 8 pipes of its own, then measures its
    /// CPU time over a 2 s sleep: `received N of 300`, `cpu during sleep S`.
    case daemonPipes = "daemon_pipes"
    /// Two workers serving requests (`handle_request` -> `query_database` asleep, `render_page` on
    /// CPU, 25-75 ms each) and one `long_call` spanning a window boundary, each call timed and
    /// printed as `call NAME MS END_UNIX_NS TID`: SECONDS [LONG_MS].
    case callService = "call_service"
    /// Forks a child every 100 ms, each saying whether its own daemon socket exists, until file
    /// AFTER exists; then three more (`after N daemon yes|no`) and exits 0: AFTER.
    case forkRounds = "fork_rounds"
    /// A preload library (after the preload library) that walks sampled contexts of any program with
    /// the engine's tables and with libunwind, and writes the comparison at exit (see its header).
    case unwindDiff = "unwind_diff"
    /// C++; exceptions, a SIGALRM handler of its own doing work, PLT calls, the vDSO, qsort callbacks.
    case unwindCode = "unwind_code"
    /// C++ built with frame pointers; threads asleep two calls deep (`X_thread;X_middle;X_leaf`)
    /// in nanosleep, poll, epoll_wait, read, a condition variable, ppoll and epoll_pwait: SECONDS.
    case fpSleepers = "fp_sleepers"
    /// fp_sleepers built without frame pointers.
    case fpSleepersNoFramePointers = "fp_sleepers_nofp"
    /// Calls the blocking calls the profiler passes through its frames and checks their results
    /// and errno (syscall's seventh argument, recvfrom's sixth…); `checked N`, exit 1 on a difference.
    case waitCalls = "wait_calls"
    /// Calls strtol through the PLT 60 million times from `parse_numbers`.
    case pltCalls = "plt_calls"

    /// The source file, relative to Tests/Programs.
    private var source: String {
        switch self {
        case .matrix, .swiftSignals: rawValue + ".swift"
        case .threadsBeforeStartSwift: "threads_before_start.swift"
        case .asyncStages, .asyncStagesSelf: "async_stages.swift"
        case .threadsBeforeStartNoFramePointers: "threads_before_start.c"
        case .rustThreads, .rustThreadsV0: "rust_threads.rs"
        case .loaderChurn, .unwindCode, .fpSleepers: rawValue + ".cpp"
        case .fpSleepersNoFramePointers: "fp_sleepers.cpp"
        default: rawValue + ".c"
        }
    }

    /// The compiler command line, minus the output path and source.
    /// C programs: gcc -O2 without frame pointers, as most Debian code is built (with -g where DWARF is the point).
    private var compiler: [String] {
        switch self {
        case .matrix, .swiftSignals: ["swiftc", "-O"]
        case .loaderChurn: ["g++", "-O2", "-pthread"]
        case .unwindCode: ["g++", "-O2"]
        case .fpSleepers: ["g++", "-O2", "-pthread", "-fno-omit-frame-pointer"]
        case .fpSleepersNoFramePointers: ["g++", "-O2", "-pthread", "-fomit-frame-pointer"]
        case .unwindDiff: ["gcc", "-O2", "-shared", "-fPIC", "-I", PackagePaths.root + "/Sources/CEngine/include"]
        case .plugin: ["gcc", "-O2", "-shared", "-fPIC"]
        case .bursts, .lateThreads, .waitCalls, .handoff: ["gcc", "-O2", "-pthread"]
        case .threads, .deep, .sleepers, .threadPool, .churn, .stall, .execer, .forkLoader, .keyHoarder, .signalRaces, .windowService, .daemonPipes,
             .callService, .mainExitsFirst:
            ["gcc", "-O2", "-pthread"]
        case .split, .ownSigprof, .exitStatus, .faults, .forker, .victim, .stripped, .invocations, .crash, .dispositionSetters, .tidReuse,
             .profilerFds, .denyPerfEvents, .allowOnly, .pageFaults, .service, .forkRounds, .syscalls, .shortNaps, .maskedWaits, .pltCalls: ["gcc", "-O2"]
        case .cAPI, .cAPIExec: ["gcc", "-O2", "-I", PackagePaths.root + "/Sources/StackSamplerPreload/include"]
        case .sessions: ["gcc", "-O2", "-pthread", "-I", PackagePaths.root + "/Sources/StackSamplerPreload/include"]
        case .inlined: ["gcc", "-O2", "-g"]
        case .threadsBeforeStart: ["gcc", "-O2", "-pthread", "-fno-omit-frame-pointer", "-I", PackagePaths.root + "/Sources/StackSamplerPreload/include"]
        case .threadsBeforeStartNoFramePointers:
            ["gcc", "-O2", "-pthread", "-fomit-frame-pointer", "-I", PackagePaths.root + "/Sources/StackSamplerPreload/include"]
        // -g: swiftc on Linux writes .eh_frame for every function only with debug info.
        case .threadsBeforeStartSwift:
            ["swiftc", "-O", "-g", "-import-objc-header", PackagePaths.root + "/Sources/StackSamplerPreload/include/stacksampler.h"]
        case .asyncStages: ["swiftc", "-O", "-g", "-parse-as-library"]
        case .asyncStagesSelf:
            ["swiftc", "-O", "-g", "-parse-as-library", "-D", "SELF_PROFILING",
             "-import-objc-header", PackagePaths.root + "/Sources/StackSamplerPreload/include/stacksampler.h"]
        case .smallAltstack, .ownLibunwind, .hiddenDlclose, .sigprofReader, .smallStack: ["gcc", "-O2", "-pthread"]
        case .fdHeadroom: ["gcc", "-O2", "-D_FORTIFY_SOURCE=2", "-pthread"]
        case .rustThreads: ["rustc", "-O"]
        case .rustThreadsV0: ["rustc", "-O", "-C", "symbol-mangling-version=v0"]
        }
    }

    /// Libraries to link, after the source; the preload library (for the C API) is linked from,
    /// and found at run time in, `libraryDirectory`.
    private func libraries(from libraryDirectory: String) -> [String] {
        switch self {
        case .cAPI, .cAPIExec, .sessions, .threadsBeforeStart, .threadsBeforeStartNoFramePointers:
            ["-L", libraryDirectory, "-lStackSamplerPreload", "-Wl,-rpath," + libraryDirectory]
        case .threadsBeforeStartSwift, .asyncStagesSelf:
            ["-L", libraryDirectory, "-lStackSamplerPreload", "-Xlinker", "-rpath", "-Xlinker", libraryDirectory]
        case .unwindDiff:
            ["-L", libraryDirectory, "-lStackSamplerPreload", "-Wl,-rpath," + libraryDirectory, "-ldl", "-lpthread"]
        default: []
        }
    }

    /// Paths of the programs compiled so far in this run.
    private static let compiled = Mutex<[TestProgram: String]>([:])

    /// Path of the compiled program, compiling it now if this run has not yet.
    func executable() throws -> String {
        try Self.compiled.withLock { cache in
            if let path = cache[self] { return path }
            let path = try compile()
            cache[self] = path
            return path
        }
    }

    /// The program as compiled, before stripping (for `nm`); the same as `executable()` for
    /// programs that are not stripped.
    func unstrippedExecutable() throws -> String {
        let path = try executable()
        return self == .stripped ? path + ".unstripped" : path
    }

    /// Compiles the program into this run's `bin/` directory, linked to the build directory's
    /// preload library.
    private func compile() throws -> String {
        let bin = ScratchDirectory.run + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        return try compiled(into: bin, libraryDirectory: BuildProducts.directory)
    }

    /// Compiles the program into `directory` (and strips it, for `.stripped`), linked to the
    /// preload library in `libraryDirectory`; not cached. Throws with the tool's output on failure.
    func compiled(into directory: String, libraryDirectory: String) throws -> String {
        let output = directory + "/" + rawValue
        let compiled = self == .stripped ? output + ".unstripped" : output
        let result = try ChildProcess.run(
            compiler[0], Array(compiler.dropFirst()) + ["-o", compiled, PackagePaths.programs + "/" + source] + libraries(from: libraryDirectory),
            in: directory, timeout: .seconds(300))
        guard result.termination == .exited(0) else {
            throw HarnessError("compiling \(source) failed: \(result)")
        }
        if compiled != output {
            let strip = try ChildProcess.run("strip", ["-o", output, compiled], in: directory, timeout: .seconds(60))
            guard strip.termination == .exited(0) else { throw HarnessError("stripping \(rawValue) failed: \(strip)") }
        }
        return output
    }
}
