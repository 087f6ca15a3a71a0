/*
 * StackSampler engine: the interface between the C core and its Swift callers (the
 * CEngineHeader module). What only C callers use is in stacksampler_engine_c.h.
 *
 * The engine installs the signal handler, arms per-thread timers, unwinds in
 * signal context and writes fixed-size raw samples into memory reserved by
 * ss_engine_init(). Everything else (policy, aggregation, names) lives in
 * the caller, which drains samples with ss_buffer_peek()/ss_buffer_advance().
 */
#ifndef STACKSAMPLER_ENGINE_H
#define STACKSAMPLER_ENGINE_H

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How samples are triggered. */
typedef enum {
    SS_MODE_CPU = 0,  /**< per-thread CPU-time timers, signal on CPU use */
    SS_MODE_WALL = 1, /**< the caller counts wall-clock ticks; running threads are sampled like in cpu mode, signalled only in user mode */
} ss_mode;

/** Sample flags. */
enum {
    SS_SAMPLE_TRUNCATED = 1u << 0,   /**< deeper than the configured maximum depth */
    SS_SAMPLE_LEAF_ONLY = 1u << 1,   /**< too little stack left to walk (a small alternate signal stack, the end of the
                                          thread's own): only the interrupted PC */
    SS_SAMPLE_UNWIND_FAILED = 1u << 2, /**< walk ended before the thread's first frame (a pc without unwind
                                            info, a rule it cannot follow, a stack pointer that did not move up):
                                            the frames found so far */
    SS_SAMPLE_UNWIND_FAULTED = 1u << 3, /**< walk read unmapped memory; sample ended at the leaf */
    SS_SAMPLE_WITHOUT_SIGNAL = 1u << 4, /**< wall mode: a thread blocked in a system call, walked by the sampler
                                             thread from the stack pointer and PC the kernel shows, unsignalled */
    SS_SAMPLE_ASYNC = 1u << 5, /**< a Swift job: the last `async_frames` frames are the async chain's resume
                                    functions, innermost first, in place of the executor frames above the
                                    innermost async function; each is stored as its entry + 1, so that a
                                    reader that takes a caller's frame minus 1 as the call finds its entry */
    SS_SAMPLE_FRAME_POINTERS = 1u << 6, /**< the walk crossed code without CFI that no module accounts for (JIT
                                             code) by frame pointers, every step checked: the callers of those
                                             frames are as sure as the code's keeping of its frame pointer */
};

/** One raw sample as stored in the buffer. Frames are leaf first. */
typedef struct {
    uint64_t time_ns;   /**< CLOCK_MONOTONIC at the signal */
    int64_t cpu_ns;     /**< wall mode: the thread's CPU time as the handler ends (so the profiler's
                             own time never looks like the thread ran); -1 in cpu mode */
    int32_t tid;        /**< thread that was interrupted */
    uint16_t depth;     /**< number of valid entries in frames */
    uint16_t flags;     /**< SS_SAMPLE_* */
    uint32_t periods;   /**< periods this sample stands for: 1, plus the timer's overrun in cpu
                             mode (expirations the kernel noticed late and merged into this one) */
    uint16_t async_frames; /**< with SS_SAMPLE_ASYNC: how many of the last frames are async resume functions */
    uintptr_t frames[]; /**< frames[0] is the interrupted PC, then return addresses */
} ss_sample;

static inline const uintptr_t *ss_sample_frames(const void *sample) {
    return ((const ss_sample *)sample)->frames;
}

/** What produces cpu-mode samples. */
typedef enum {
    SS_ENGINE_AUTOMATIC = 0, /**< perf_event counters when the kernel allows them, else timers */
    SS_ENGINE_TIMERS = 1,    /**< per-thread CPU-time timers (at scheduler ticks) */
    SS_ENGINE_PERF = 2,      /**< per-thread perf_event task-clock counters, or an error */
} ss_engine_choice;

/** Engine configuration, fixed between ss_engine_init() and process exit. */
typedef struct {
    ss_mode mode;         /**< what triggers samples */
    uint64_t period_ns;   /**< sampling period */
    uint32_t max_depth;   /**< frames kept per sample (deeper stacks are truncated) */
    uint32_t buffer_slots;/**< samples the buffer holds before dropping */
    ss_engine_choice engine; /**< cpu mode: what produces the samples */
    uint32_t event_type;     /**< cpu mode, perf engine: a perf_event type (PERF_TYPE_SOFTWARE, _HARDWARE),
                                  or 0 with event_config 0 for the task clock (CPU time) */
    uint64_t event_config;   /**< the event within its type (PERF_COUNT_SW_PAGE_FAULTS, ...) */
    uint64_t event_period;   /**< a sample every this many events (0: every period_ns of CPU time) */
} ss_config;

/** Engine error codes (negative) and success (0). */
enum {
    SS_OK = 0,
    SS_ERR_ALREADY_RUNNING = -1, /**< ss_engine_init while sampling */
    SS_ERR_NO_SIGNAL = -3,       /**< no free signal for this mode */
    SS_ERR_NO_MEMORY = -4,       /**< the buffer could not be reserved */
    SS_ERR_BAD_CONFIG = -5,      /**< a value out of range, or a buffer size changed between sessions */
    SS_ERR_NOT_RUNNING = -6,     /**< not sampling */
    SS_ERR_ENGINE_UNAVAILABLE = -7, /**< the engine asked for cannot run here (ss_engine_description says why) */
};

/** Events counted so far by the perf engine's counters that have been closed (threads that
 *  ended, sessions that stopped), for the samples that overflows lost (throttling, or a signal
 *  still pending when the next overflow came). */
uint64_t ss_engine_events_counted(void);

/** Overflows of the perf engine's task-clock counters dropped as left over from a counter's
 *  random first period (a second overflow before the handler set the whole period). */
uint64_t ss_engine_early_overflows(void);

/** The engine of the session (started, or refused): what produces the samples, and why
 *  that one when it was chosen automatically, e.g. "CPU-time timers (perf_event_open: Permission denied)". */
const char *ss_engine_description(void);

/** cpu mode: nonzero when the samples cover the threads' time in the kernel as well as in user
 *  space (the timers), 0 with the perf engine, whose counters count user space only (an
 *  overflow in the kernel is then no sample). */
int ss_engine_counts_kernel_time(void);

/** Wall mode: the CPU time between two samples of a running thread with the session's engine
 *  (the counters' period; the timers' period or the scheduler tick, whichever is longer: a timer
 *  fires only at a tick that finds its thread running). Changes once, when a presumed perf
 *  engine is settled. */
uint64_t ss_engine_sample_spacing_ns(void);

/** Prepares the engine: reserves the buffer, compiles the loaded modules' unwind
 *  tables, picks and installs the signal handler. Does not arm any timer. In a
 *  process with no other thread, the tables are left to ss_engine_sampler_starting()
 *  and the timers of threads attached until then are made disarmed. */
int ss_engine_init(const ss_config *config);

/** Called by the sampler thread as it starts, before its first tick: compiles the
 *  unwind tables the start left to it (every module listed at start), then arms the timers it
 *  deferred. Returns early once ss_sampler_wake() has been called. */
void ss_engine_sampler_starting(void);

/** Stops sampling: disarms all timers; the handler stays installed but inert.
 *  Samples already in the buffer can still be drained. */
void ss_engine_stop(void);

/** The signal number in use, and whether it is SIGPROF (usual, both modes)
 *  or a substitute because the program had a handler on SIGPROF. */
int ss_engine_signal(void);
/** Nonzero when ss_engine_signal() is a substitute for SIGPROF (see above). */
int ss_engine_signal_substituted(void);

/** Starts sampling thread `tid`: in cpu mode creates and arms its timer (left disarmed while
 *  the thread blocks the engine's signal). `replace` discards an earlier registration of the
 *  same tid (tid reuse). Returns 0, or a negative errno. */
int ss_thread_attach(int32_t tid, int replace);

/** Stops sampling thread `tid` and deletes its timer. */
void ss_thread_detach(int32_t tid);

/** A thread that ended: when it detached itself, and its CPU time then. */
typedef struct {
    int32_t tid;
    uint64_t time_ns;
    int64_t cpu_ns;
} ss_ended_thread;

/** Detaches the calling thread as it ends (the pthread_create hook) and notes when, with its
 *  CPU time then, for ss_thread_take_ended. */
void ss_thread_detach_ending(void);

/** Moves up to `capacity` notes of threads that detached themselves as they ended, oldest first,
 *  into `notes`; returns how many (wall mode counts their last ticks with them). */
size_t ss_thread_take_ended(ss_ended_thread *notes, size_t capacity);

/** Notes whether attached thread `tid` blocks the engine's signal, as its mask was read (a
 *  thread that changed its mask without pthread_sigmask or sigprocmask, which the engine
 *  interposes): while it does, its timer or counter is disarmed and it is never signalled. */
void ss_thread_note_signal_blocked(int32_t tid, int blocked);

/** Whether thread `tid` of this process blocks signal `signo` (1 or 0), from `SigBlk` in its
 *  /proc status; -1 if that cannot be read (the thread has exited). */
int ss_thread_blocks_signal(int32_t tid, int signo);

/** Nonzero when attached thread `tid` is known to block the engine's signal: the interposed
 *  mask calls (or the last mask read) said so, and it is disarmed. */
int ss_thread_signal_blocked(int32_t tid);

/** A number that changes every time attached thread `tid` gets a core, read without a system
 *  call, or -1 when that cannot be told (not attached, disarmed, or an engine without it: only
 *  the perf engine's counters tell it). Equal at two moments: the thread did not get a core
 *  between them, so one asleep at the first did not run. */
int64_t ss_thread_schedule_sequence(int32_t tid);

/** When `tid`'s attach began (CLOCK_MONOTONIC ns), or 0 if it is not attached: before it, the
 *  thread was not sampled (most often: it did not exist yet). */
uint64_t ss_thread_attached_at(int32_t tid);

/** cpu mode: nonzero when `tid` is attached but its timer belongs to an earlier thread of the same
 *  tid that has exited (a tid reused by a thread not created through pthread_create, before the
 *  sampler's scan noticed): attach it again with `replace`. */
int ss_thread_timer_orphaned(int32_t tid);

/** Number of threads currently attached; fills up to `capacity` tids. */
size_t ss_thread_list(int32_t *tids, size_t capacity);

/** Attaches refused so far because the perf engine held all the counters its bound allows (a
 *  sixteenth of the file descriptor limit), or the process had reached that limit (each thread
 *  needs a descriptor for its counter): those threads are not sampled until one is free. */
uint64_t ss_thread_descriptor_refusals(void);

/** Starts a thread that is never sampled: created with the real
 *  pthread_create, all signals blocked. For the profiler's own thread. */
int ss_spawn_unsampled_thread(pthread_t *thread, void *(*start)(void *), void *argument);

/** Name of the engine's function that starts every thread created while
 *  sampling; it is the profiler's, not the program's, so profiles omit it. */
#define SS_THREAD_TRAMPOLINE_NAME "stacksampler_thread_trampoline"

/** Clears an earlier ss_sampler_wake(), before a session's sampler thread starts. */
void ss_sampler_sleep_reset(void);

/** What ended a sleep of the sampler thread. */
enum {
    SS_WOKEN_AT_DEADLINE = 0, /**< the deadline passed */
    SS_WOKEN_TO_STOP = 1,     /**< ss_sampler_wake(): the session is stopping */
    SS_WOKEN_TO_REFRESH = 2,  /**< the engine asked for a refresh of the module copy now (a dlclose, a walk
                                   that met a module without a table), or a fork for the sampler to park */
    SS_WOKEN_FOR_THREAD = 3,  /**< a thread started through pthread_create was attached (when asked for) */
};

/** Sleeps until CLOCK_MONOTONIC time `deadline_ns`, or until ss_sampler_wake() is called or the
 *  engine asks for a refresh (also if that came before), or, with `wake_for_new_thread`, the
 *  first thread attached by the pthread_create hook during the sleep; says which. */
int ss_sampler_sleep_until(uint64_t deadline_ns, int wake_for_new_thread);

/** A thread started through pthread_create was attached: ends the sampler thread's sleep if it
 *  asked for it (once per sleep). */
void ss_sampler_note_new_thread(void);

/** Ends the sampler thread's current and every later sleep (stopping the session). */
void ss_sampler_wake(void);

/** Excludes the calling thread from sampling (the sampler thread itself). */
void ss_thread_exclude_current(void);

/** Names the calling thread, one of the profiler's own, as `top -H`, `perf` and debuggers show
 *  it (PR_SET_NAME: the kernel keeps the first 15 bytes). */
void ss_thread_set_own_name(const char *name);

/** Excludes the calling thread from sampling (nonzero) or lets it be sampled again (0), and
 *  returns what it was: for a program thread while it runs the profiler's own code (stopping a
 *  session, writing the profile), whose samples would count the profiler as the program. */
int ss_thread_set_excluded(int excluded);
/** A file the profiler opened for a moment (borrowed_files.c): which file it is. */
typedef struct {
    uint64_t device;
    uint64_t inode;
} ss_file_identity;
/** Opens `path` read-only (plus `flags`, e.g. O_DIRECTORY), close-on-exec, and notes which file
 *  it is: the descriptor, or -1. */
int ss_borrowed_open(const char *path, int flags, ss_file_identity *identity);
/** Notes which file `fd` is: 0, or -1. */
int ss_borrowed_identify(int fd, ss_file_identity *identity);
/** Whether `fd` is still the file `identity` names (the program may have closed and reused it). */
int ss_borrowed_is(int fd, const ss_file_identity *identity);
/** Closes `fd` if it is still that file. */
void ss_borrowed_close(int fd, const ss_file_identity *identity);
/** getdents64 on `fd` if it is still that file: the bytes read, 0 at the end, or -1. */
long ss_borrowed_read_directory(int fd, const ss_file_identity *identity, void *buffer, size_t size);
/** The load address of the module holding `address` (0 if none), and its file as the loader
 *  names it in `*path` (if `path`); takes the loader's lock, never in a signal handler. */
uintptr_t ss_module_base_of(uintptr_t address, const char **path);
/** Whether thread `tid` is in a wait that sets its signal mask for the wait's length
 *  (wait_hooks.c), the engine's signal blocked there by the profiler, not by the program. */
int ss_thread_in_masked_wait(int32_t tid);
/** The load address of the program's executable (0 if unknown). */
uintptr_t ss_program_base(void);
/* Whether the main thread has ended by pthread_exit while the profiler's threads lived (it stays
 * a zombie in /proc/self/task until the process ends, and is not attached again). */
int ss_main_thread_ended(void);

/** Numeric field `field` (from 3, as proc(5) numbers them: 4 the parent, 20 the threads) of
 *  process `pid`'s /proc stat (0: this process's), or 0 if it cannot be read. */
long ss_proc_stat_field(long pid, int field);

/** CPU time consumed by thread `tid` of this process, in ns; -1 if gone. */
int64_t ss_thread_cpu_time_ns(int32_t tid);

/** Wall mode: the CPU time between two samples of a running thread, for a wall period of
 *  `period_ns` (engine.c). */
uint64_t ss_wall_counter_period(uint64_t period_ns);

/** Wall mode: the sampler counts ticks at `origin_ns` + k x `interval_ns` from now on; the handler
 *  walks only the signals whose stack a tick can take (wall_tick_grid.c). */
void ss_wall_tick_grid_set(uint64_t origin_ns, uint64_t interval_ns);

/** Wall mode: signals answered without a walk, no tick being near them (wall_tick_grid.c). */
uint64_t ss_wall_signals_unwalked(void);

/** Wall mode: a thread's context switches, read from a ring the kernel writes (switch_ring.c). */
typedef struct ss_switch_ring ss_switch_ring;

/** What a context-switch record says. */
typedef enum {
    SS_SWITCH_IN = 0,            /**< the thread got a core */
    SS_SWITCH_OUT_PREEMPTED = 1, /**< it left its core still runnable: waiting for a core */
    SS_SWITCH_OUT_BLOCKED = 2,   /**< it left its core to sleep (a blocking call, a fault, a lock) */
    SS_SWITCH_LOST = 3,          /**< the kernel lost records here (the ring was full): the state is unknown */
} ss_switch_kind;

/** One context switch of a thread, at `time_ns` (CLOCK_MONOTONIC; 0 for SS_SWITCH_LOST). */
typedef struct {
    uint64_t time_ns;
    ss_switch_kind kind;
} ss_switch;

/** Opens the context-switch ring of thread `tid` (no descriptor stays open); NULL with
 *  `*error` set to -errno when the kernel refuses (perf_event_open, or its locked-memory limit),
 *  or to a code below -4095 when a seccomp filter does (SS_PERF_REFUSED_BY_FILTER). */
ss_switch_ring *ss_switch_ring_open(int32_t tid, int *error);
/** Errors below this are a seccomp filter's refusal of perf_event_open, no errno. */
#define SS_PERF_REFUSED_BY_FILTER (-4096)
/** How many rings a session may open: each takes two pages of the locked memory the kernel lets
 *  a user's perf events have (`perf_event_mlock_kb` for each online CPU); a session takes at most
 *  half of it, and never more than 1024, so that it never spills into the process's own
 *  `RLIMIT_MEMLOCK` (the kernel charges it there past that budget). */
int ss_switch_ring_bound(void);

/** Moves up to `capacity` of the ring's records, oldest first, into `switches`; returns how many.
 *  Call from one thread at a time. */
int ss_switch_ring_read(ss_switch_ring *ring, ss_switch *switches, int capacity);

/** The newest of the ring's records not read yet, left unread: 1, or 0 when there is none. */
int ss_switch_ring_newest(const ss_switch_ring *ring, ss_switch *newest);

/** Whether the records not read yet take half the ring or more (read them before it fills). */
int ss_switch_ring_filling(const ss_switch_ring *ring);

/** Whether the ring holds records not read yet: none, and the thread has not been switched in or
 *  out since the last read (on x86-64, a load after reading memory the thread wrote since it was
 *  switched in sees its record). */
int ss_switch_ring_unread(const ss_switch_ring *ring);

/** Unmaps the ring, which ends its event. */
void ss_switch_ring_close(ss_switch_ring *ring);

/** Wall mode: the stack a thread had each time it left its core, copied by the kernel then
 *  (preempt_snapshot.c). */
typedef struct ss_preempt_ring ss_preempt_ring;

/** Opens thread `tid`'s ring (no descriptor stays open); NULL with `*error` set to -errno when
 *  the kernel refuses (below -4095: a seccomp filter, SS_PERF_REFUSED_BY_FILTER): it samples context switches only for a user allowed to profile the kernel
 *  (CAP_PERFMON, or perf_event_paranoid at most 1). Each switch then costs the thread about 3 us. */
ss_preempt_ring *ss_preempt_ring_open(int32_t tid, int *error);
/** How many rings a session may open (260 KiB of memory each): none unless the process may lock
 *  memory (CAP_IPC_LOCK), since the kernel charges the rings' pages past the user's perf budget
 *  to the process's RLIMIT_MEMLOCK, which is the program's. */
int ss_preempt_ring_bound(void);
/** Walks the stack copied as the thread left its core in the switch recorded at `switch_ns`, on
 *  the core it got at `since_ns` (so that the copy of an earlier switch is never taken for it),
 *  into `sample` (at most `capacity` frames; sets its depth, flags and time), dropping the copies
 *  before it: 1 walked whole, -1 walked but ended early (the copy too short, or a frame without
 *  unwind info), 0 no copy of that switch (lost, or the ring opened after it). Call with the
 *  switches in the order they came, from one thread at a time. */
int ss_preempt_ring_walk(ss_preempt_ring *ring, uint64_t since_ns, uint64_t switch_ns, ss_sample *sample, int capacity);
/** Drops the copies taken at or before `time_ns`. */
void ss_preempt_ring_drop(ss_preempt_ring *ring, uint64_t time_ns);
/** Unmaps the ring, which ends its event. */
void ss_preempt_ring_close(ss_preempt_ring *ring);

/** Compiles the unwind tables of modules loaded since the last call and drops those
 *  of modules gone, so that the handler never reads a module or takes the loader's lock.
 *  Cheap when nothing was loaded or unloaded. Call from the sampler thread. */
void ss_module_cache_refresh(void);

/** Reads again, from /proc/self/maps, the executable memory no module accounts for (JIT code,
 *  which the walk crosses by frame pointer), if a walk met code outside every known range since
 *  the last read, at most every 100 ms. Call from the sampler thread. */
void ss_code_ranges_refresh(void);

/** Counts the refreshes that found the module list changed (dlopen, dlclose). */
uint64_t ss_module_cache_generation(void);

/** Reads the word at `address` into `value`; returns 0, or nonzero if it cannot. */
typedef int (*ss_memory_reader)(uintptr_t address, uintptr_t *value, void *context);

/** A reader that never faults (process_vm_readv on this process): fails on unmapped memory. */
int ss_read_memory_checked(uintptr_t address, uintptr_t *value, void *context);

/** Where a thread is blocked: its system call (-1 outside one) with its arguments, and the
 *  stack pointer and PC it blocked at. */
typedef struct {
    long syscall;
    uint64_t arguments[6];
    uintptr_t stack_pointer;
    uintptr_t program_counter;
} ss_blocked_position;

/** Reads where thread `tid` of this process is blocked (/proc/self/task/TID/syscall): 1 with
 *  `position` set, 0 while it runs (or is caught changing state), -1 once it has exited. */
int ss_thread_blocked_position(int32_t tid, ss_blocked_position *position);

/** A thread's held file (ss_thread_blocked_position_held): none (held at the next read if a
 *  place is free), or refused (no room among the engine's descriptors: never held). */
enum { SS_HELD_FILE_NONE = -1, SS_HELD_FILE_REFUSED = -2 };

/** ss_thread_blocked_position for a thread read again and again, through its file held open:
 *  `*slot` starts SS_HELD_FILE_NONE and is set to the held file, to SS_HELD_FILE_REFUSED, or
 *  back to SS_HELD_FILE_NONE when the hold is given up (the program took its number, or the
 *  file's thread exited). One thread at a time (the sampler's). */
int ss_thread_blocked_position_held(int32_t tid, int *slot, ss_blocked_position *position);

/** Closes a held file (a slot set by ss_thread_blocked_position_held), if still ours. */
void ss_held_file_close(int slot);

/** A page of another thread's stack copied by ss_read_memory_paged; zero it before a walk. */
typedef struct {
    uintptr_t base;
    int valid;
    unsigned char bytes[4096];
} ss_page_cache;

/** A reader like ss_read_memory_checked that copies a whole page at a time into `context`
 *  (an ss_page_cache): one system call per stack page instead of one per word. */
int ss_read_memory_paged(uintptr_t address, uintptr_t *value, void *context);

/** How a stack walk ended. */
enum {
    SS_WALK_COMPLETE = 0,    /**< reached the thread's first frame */
    SS_WALK_TRUNCATED = 1,   /**< `capacity` frames written, more above */
    SS_WALK_ENDED_EARLY = 2, /**< a frame without unwind info or with a rule the walk cannot follow */
};

/** Walks the stack of a thread stopped at `pc` with stack pointer `sp` and frame pointer
 *  `fp` (`fp_known` 0 if not known) through the engine's unwind tables, reading memory with
 *  `read`. Writes `pc` then the return addresses, leaf first; returns their count and sets
 *  `outcome` (SS_WALK_*) and, unless NULL, `frame_pointer_steps` (the steps taken by frame
 *  pointer through JIT code, see SS_SAMPLE_FRAME_POINTERS). The engine's own code is left out,
 *  as from every sample (the walk ends at the program's call that led into it). Signal-safe if
 *  `read` is. For the sampler thread, with ss_read_memory_checked, on a thread stopped in a
 *  system call. */
int ss_unwind_stack(uintptr_t pc, uintptr_t sp, uintptr_t fp, int fp_known, ss_memory_reader read, void *context,
                    uintptr_t *frames, int capacity, int *outcome, int *frame_pointer_steps);

/** How a walk of a Swift async context chain ended (Parent, ResumeParent from an async context). */
enum {
    SS_ASYNC_COMPLETE = 0,   /**< reached the task's first context (Parent NULL): the chain is recorded */
    SS_ASYNC_NO_CONTEXT,     /**< the context register in the async frame could not be known */
    SS_ASYNC_UNREADABLE,     /**< a context could not be read (unmapped memory, a misaligned pointer) */
    SS_ASYNC_NOT_CODE,       /**< a resume function outside every module's unwind tables */
    SS_ASYNC_CYCLE,          /**< a context leads back to an earlier one */
    SS_ASYNC_TOO_DEEP,       /**< more contexts than the sample has room for, or SS_ASYNC_MAX_DEPTH */
    SS_ASYNC_OUTCOMES,       /**< the number of outcomes */
};

/** The deepest async chain a sample records. */
#define SS_ASYNC_MAX_DEPTH 128

/** Walks the async context chain from `context` (an async function's context), reading memory
 *  with `read`: writes the parents' resume functions, innermost first (the task's first context,
 *  whose resume function is the runtime's, adds none), at most `capacity`. Returns their count
 *  and sets `outcome` (SS_ASYNC_*); what it wrote counts only with SS_ASYNC_COMPLETE. */
int ss_async_chain(uintptr_t context, ss_memory_reader read, void *read_context, uintptr_t *resumes, int capacity,
                   int *outcome);

/** Samples by how their async chain walk ended (SS_ASYNC_OUTCOMES entries): only samples taken in
 *  a frame the Swift runtime's job-running function called count. */
void ss_async_statistics(uint64_t *counts);

/** What the engine knows of the Swift concurrency runtime of the process. */
enum {
    SS_ASYNC_RUNTIME_ABSENT = 0,    /**< not loaded (yet): no sample is a Swift job */
    SS_ASYNC_RUNTIME_SUPPORTED,     /**< loaded, with the context layout checked: async stacks recorded */
    SS_ASYNC_RUNTIME_UNSUPPORTED,   /**< loaded, but its layout version or job-running function unknown */
};

/** The runtime's status (SS_ASYNC_RUNTIME_*); `layout_version` gets the runtime's debug layout
 *  version (`_swift_concurrency_debug_internal_layout_version`), -1 if none was found. */
int ss_async_runtime_status(int64_t *layout_version);

/** Turns the async chain of Swift jobs on (the default) or off (machine stacks only). */
void ss_async_stacks_enable(int enabled);

/** ss_unwind_stack from the caller of this function, at its call (return address - 1). */
int ss_unwind_caller_stack(ss_memory_reader read, void *context, uintptr_t *frames, int capacity, int *outcome);

/** Faults the next chunk of the sample buffer's pages in, so that no handler takes a page
 *  fault writing a sample; returns nonzero while chunks remain. Called by the sampler thread
 *  as it starts, off the program's path, until it returns 0 or the session stops. */
int ss_buffer_prefault_next(void);

/** Next sample ready for reading, or NULL. Single reader only. */
const ss_sample *ss_buffer_peek(void);

/** Releases the sample returned by the last ss_buffer_peek(). */
void ss_buffer_advance(void);

/** Samples dropped because the buffer was full. */
uint64_t ss_buffer_dropped(void);

/** Signals of the profiling signal number that were not the engine's own, handed to the program. */
uint64_t ss_engine_foreign_signals(void);

/** Histogram of time spent in the handler per recorded sample:
 *  bucket i counts samples that took [i*100, (i+1)*100) ns; the last bucket
 *  holds everything longer. */
#define SS_HANDLER_HISTOGRAM_BUCKETS 1000
#define SS_HANDLER_HISTOGRAM_BUCKET_NS 100

/** Copies the handler-time histogram (SS_HANDLER_HISTOGRAM_BUCKETS entries). */
void ss_handler_histogram(uint64_t *buckets);

/** CLOCK_MONOTONIC now, in ns (same clock as sample times). */
uint64_t ss_now_ns(void);

/** Nonzero in secure-execution mode (AT_SECURE: setuid, setgid or file capabilities). The
 *  environment then belongs to a less privileged user: output paths, listeners and settings from it
 *  must not be used with the program's privileges, so a caller does nothing and says so. */
int ss_secure_execution(void);

/** Returns freed heap pages to the system (malloc_trim): after naming, outside any session's hot path. */
void ss_release_free_memory(void);

/** Kernel thread id of the calling thread. */
int32_t ss_current_tid(void);

/** What the owner of the session (the preload library) does around exec and fork. The engine
 *  calls these from its interposed exec family and its fork handlers; any may be NULL. */
typedef struct {
    /** Before an exec by this process: stop sampling (sampler joined, timers deleted) and keep
     *  what was sampled. Returns nonzero if a session was stopped, to be resumed if exec fails. */
    int (*stop_for_exec)(void);
    /** After an exec that failed (the caller's errno is restored afterwards): sample again. */
    void (*resume_after_failed_exec)(void);
    /** In a child made by fork, once the engine is reset there, and only if the sampler thread
     *  held nothing at the fork and no thread held the loader's write lock (which fork does not
     *  reset): start the child's own session, if it should have one. `parent` is the pid of the
     *  process that forked, which getppid() no longer tells once that process has exited. */
    void (*start_in_forked_child)(int32_t parent);
} ss_session_hooks;

/** Registers `hooks` for the calling process (a forked child registers its own again). */
void ss_set_session_hooks(const ss_session_hooks *hooks);

/** Nonzero once the calling process has registered hooks (a forked child has not, until it does). */
int ss_session_hooks_registered(void);

/** The sampler thread's side of fork quiescing: ss_sampler_arriving() before the thread is
 *  spawned, ss_sampler_park_point() where it holds no lock (after each sleep), and
 *  ss_sampler_leaving() as it ends. A fork waits until the sampler is parked or gone. */
void ss_sampler_arriving(void);
void ss_sampler_park_point(void);
void ss_sampler_leaving(void);

#ifdef __cplusplus
}
#endif
#endif
