/* Shared between the engine's files; not part of the public header. */
#ifndef STACKSAMPLER_ENGINE_INTERNAL_H
#define STACKSAMPLER_ENGINE_INTERNAL_H

#include "stacksampler_engine_c.h"
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

/* Thread-local state lives in the initial-exec model: the default model may
 * call into the loader (and allocate) on first touch, inside the handler. */
#define SS_TLS __thread __attribute__((tls_model("initial-exec")))

/* Functions the handler calls that no other library needs: not exported, so the calls
 * are direct (no PLT, no lazy binding by the loader inside a signal handler). */
#define SS_HIDDEN __attribute__((visibility("hidden")))

/* own_code.c: the profiler's own code, kept apart so that a walk can tell it from the program's.
 * Every function of the engine is placed in the section ss_engine_code (the pragma below, for
 * each file that includes this header); the functions that stand in for the C library's
 * (sigaction, pthread_create, ppoll…: what the program calls) in ss_interposer_code, the start
 * of a thread the interposed pthread_create made in ss_passthrough_code; the signal
 * handlers in ss_handler_code and the one function through which they call a program's handler
 * in ss_chain_code. A function in a section of its own is never split into hot and cold parts
 * by the compiler, so each range holds its functions whole. */
#if defined(__clang__)
#pragma clang section text = "ss_engine_code"
/* An interposed function keeps its frame while it runs the engine's code: a tail call would
 * leave the program's caller above the engine's frames, and the call it made unseen. */
#define SS_INTERPOSER __attribute__((section("ss_interposer_code"), disable_tail_calls))
#else
#define SS_INTERPOSER __attribute__((section("ss_interposer_code")))
#endif
/* A function of the engine's through which a program's own code runs (the start of a thread
 * made by the interposed pthread_create): never shown, and what it called is the program's. */
#define SS_PASSTHROUGH __attribute__((section("ss_passthrough_code")))
#define SS_HANDLER_CODE __attribute__((section("ss_handler_code"), noinline))
#define SS_CHAIN_CODE __attribute__((section("ss_chain_code"), noinline))
/* The frames `frames[0 .. count-1]` of a walk that has just stepped out of the signal frame
 * at `frames[count - 1]`, with what the profiler put there left out: its handler's frames and
 * the trampoline (the walk goes on from the code the signal interrupted), or, where its handler
 * called a program's own handler, the profiler's frames between that and the trampoline. The
 * new count. Signal-safe. */
SS_HIDDEN int ss_leave_out_own_handler(uintptr_t *frames, int count);
/* A whole walk's frames (leaf first, `count` of them) with the engine's own code left out: a
 * sample taken while a program thread ran the engine's code (a hook's work, a key destructor's,
 * an atfork handler's) ends at the call of the program's that led there (an interposed function
 * the program called, or the C library function that called the engine), its leaf then that
 * call's instruction; an interposed function a program's call passed through on its way to the
 * C library's is left out where the C library's frame is below it, and a thread's start always,
 * as without the profiler.
 * `*async_frame`, an index into the frames or -1, follows its frame (-1 if left out). The new
 * count: 0 where no frame of the program's is known (a walk that ended in the profiler's code,
 * whose sample is nobody's to show). Signal-safe. */
SS_HIDDEN int ss_leave_out_own_code(uintptr_t *frames, int count, int *async_frame);

/* session_state.c: the session's configuration (set by ss_engine_init), and whether a session
 * runs (ss_engine_running); ss_session_set_running sets that and returns what it was. */
extern ss_config ss_active_config;
/* Nonzero between ss_engine_init() and ss_engine_stop(). */
int ss_engine_running(void);
int ss_session_set_running(int now_running);

/* clock.c: ss_now_ns, the scheduler tick (the resolution of CLOCK_MONOTONIC_COARSE, 0 if
 * unknown), and the CPU-time clock of thread `tid` of this process. */
uint64_t ss_scheduler_tick_ns(void);
clockid_t ss_thread_cpu_clock(int32_t tid);

/* sandbox_probe.c: perf_event_open(attr, tid, any CPU, no group, close-on-exec) for every
 * caller in the engine, made only once the calling thread's seccomp filter, if any, is known
 * to let it through (tried in a child process): the descriptor, or -errno, or one of the two
 * refusals below, which no errno is. ss_perf_refusal_text names any of them for a person. */
#define SS_PERF_KILLED_BY_FILTER (-100001) /* the filter kills the process that calls it */
#define SS_PERF_HELD_BY_FILTER (-100002)   /* the filter did not let the call return */
SS_HIDDEN int ss_perf_event_open(struct perf_event_attr *attr, int32_t tid);
const char *ss_perf_refusal_text(int error);

/* perf_ring.c: a thread's perf_event ring, mapped with its descriptor closed at once. */
typedef struct {
    struct perf_event_mmap_page *control;
    const unsigned char *data;
    uint64_t data_size;
    size_t mapped;
} ss_perf_ring;
/* A software event `config`'s attributes, all else zero: stamped with CLOCK_MONOTONIC, as the
 * sampler's clock. */
SS_HIDDEN void ss_perf_software_attr(struct perf_event_attr *attr, uint64_t config);
/* Opens `attr`'s event on thread `tid` and maps its ring of `data_pages` pages (a power of two)
 * into a new block of `size` bytes that starts with an ss_perf_ring: the block, or NULL with
 * `*error` set to -errno. Sets the attribute's wake-up fields (never). */
SS_HIDDEN void *ss_perf_ring_open(struct perf_event_attr *attr, int32_t tid, size_t data_pages, size_t size, int *error);
/* Copies `length` bytes at ring offset `offset`, wrapping at the end. */
SS_HIDDEN void ss_perf_ring_copy(const ss_perf_ring *ring, uint64_t offset, void *into, size_t length);
/* Unmaps the ring, which ends its event, and frees its block. */
SS_HIDDEN void ss_perf_ring_close(ss_perf_ring *ring);

/* wall_tick_grid.c: whether a signal that arrived at `now`, on a thread signalled every
 * `sample_cpu_period_ns` of its CPU time, is one whose stack a tick can take. Signal-safe. */
int ss_wall_signal_needs_walk(uint64_t now, uint64_t sample_cpu_period_ns);

/* thread_identity.c: the calling thread's exclusion from sampling (ss_thread_set_excluded),
 * ss_current_tid, and the process's pid as noted by ss_identity_note_process (at the handler's
 * install, and in a forked child, where it also forgets the forking thread's tid). */
extern SS_TLS int ss_tls_excluded;
SS_HIDDEN pid_t ss_own_pid(void);
void ss_identity_note_process(void);

/* sampling_signal.c: picks the engine's signal (`preferred` if the program leaves it free, else
 * a free real-time one) and installs `handler` on it; SS_OK or SS_ERR_NO_SIGNAL. The number is
 * ss_engine_signal() from then on. */
int ss_sampling_signal_take(int preferred, void (*handler)(int, siginfo_t *, void *));

/* next_symbol.c: the definition of `name` that this library's own interposes
 * (libc's), looked up once and kept in `cache`. NULL if there is none. */
void *ss_next_symbol(const char *name, void *_Atomic *cache);
/* ss_next_symbol, or NULL with errno ENOSYS when there is none (an interposer then fails as
 * the call would where the function does not exist). */
void *ss_real_function(const char *name, void *_Atomic *cache);

/* sample_buffer.c */
int ss_buffer_create(uint32_t slots, uint32_t max_frames);
void ss_buffer_reset(void);          /* forked child: empty, no reader or writer running */
ss_sample *ss_buffer_claim(void);   /* signal-safe; NULL when full (counted) */
void ss_buffer_publish(ss_sample *sample);

/* unwind_table.c: one module's unwind rows, compiled from its .eh_frame. */
enum {
    SS_ROW_NONE = 0,      /* no unwind info here (between functions) */
    SS_ROW_CFA_RSP,       /* CFA = rsp + cfa_offset */
    SS_ROW_CFA_RBP,       /* CFA = rbp + cfa_offset */
    SS_ROW_CFA_RBX,       /* CFA = rbx + cfa_offset (the loader's lazy-binding resolver, which realigns rsp) */
    SS_ROW_PLT,           /* CFA = rsp + 8, or rsp + 16 once (pc & 15) >= cfa_offset */
    SS_ROW_OUTERMOST,     /* return address undefined: the first frame of a thread */
    SS_ROW_SIGNAL,        /* signal trampoline: the caller's registers are in a ucontext at rsp */
    SS_ROW_UNKNOWN,       /* a rule the walk cannot follow (DWARF expression, register save) */
};
/* A caller's register is at CFA + 8 * slot, or one of these markers. */
#define SS_SLOT_UNCHANGED 0        /* the caller's value is this frame's */
#define SS_SLOT_UNKNOWN INT8_MIN   /* the caller's value cannot be known */

/* The rule from module address `pc` (relative to the table's bias) to the next row's.
 * The return address is at CFA-8; the caller's rbp, rbx and r14 (the Swift async context
 * register) at CFA + 8 * their slot unless a marker. */
typedef struct {
    uint32_t pc;
    int32_t cfa_offset;
    uint8_t kind;
    int8_t rbp_slot, rbx_slot, r14_slot;
} ss_unwind_row;

/* Rows sorted by pc, in a mapping of their own, then a page index: the rows whose pc
 * is in 4 KiB page first_page + p start at rows[page_first[p]], so that a lookup touches
 * a few cache lines (the handler runs with cold caches) instead of a whole binary search. */
typedef struct {
    size_t mapped_bytes;
    uintptr_t bias; /* the module's load bias (dlpi_addr) */
    size_t count;
    const uint32_t *page_first; /* page_count entries, the last one `count` */
    uint32_t first_page, page_count;
    ss_unwind_row rows[];
} ss_unwind_table;

struct dl_phdr_info;
/* NULL when the module has no usable .eh_frame_hdr, or when `cancelled` (which may be NULL)
 * said so during the build (then `was_cancelled` is set). Call while the module cannot be
 * unmapped. */
SS_HIDDEN ss_unwind_table *ss_unwind_table_build(const struct dl_phdr_info *info, int (*cancelled)(void),
                                                 int *was_cancelled);
SS_HIDDEN void ss_unwind_table_free(ss_unwind_table *table);
/* The row covering `pc`, or NULL before the first row. Signal-safe. */
SS_HIDDEN const ss_unwind_row *ss_unwind_table_find(const ss_unwind_table *table, uintptr_t pc);

/* An address range [low, high). */
typedef struct {
    uintptr_t low, high;
} ss_code_range;
/* module_of_address.c: the executable PT_LOAD segments of a loaded module, at most `capacity`
 * of them written to `out`; how many it has. */
SS_HIDDEN size_t ss_module_code_segments(const struct dl_phdr_info *info, ss_code_range *out, size_t capacity);

/* module_cache.c: the published index of every module's table. A reader enters (never
 * waits), looks rows up, and leaves with the `buffer` it was given. */
typedef struct ss_module_index ss_module_index;
SS_HIDDEN const ss_module_index *ss_module_index_enter(int *buffer); /* NULL before the first refresh */
SS_HIDDEN void ss_module_index_leave(int buffer);
SS_HIDDEN const ss_unwind_row *ss_module_index_find(const ss_module_index *index, uintptr_t pc);
/* Whether `address` lies in an executable segment of a module the index lists, with unwind
 * rows or without (some of the Swift runtime's resume functions have none). Signal-safe. */
SS_HIDDEN int ss_module_index_holds_code(const ss_module_index *index, uintptr_t address);
/* In a forked child: a refresh or a reader of the parent's is gone with its thread (a fork
 * waits for the sampler thread to park between ticks, outside any refresh: fork_quiesce.c). */
void ss_module_cache_reset_after_fork(void);
/* At engine start: compiles every module's table now, or with `deferred` none, listing
 * them all for the sampler thread (ss_module_cache_refresh as it starts, before arming). */
void ss_module_cache_prepare(int deferred);
/* The profiler's own modules are compiled too from the next refresh on: a walk ended early
 * (handler.c), maybe in one of them. Async-signal-safe. */
SS_HIDDEN void ss_module_cache_want_own_tables(void);

/* perf_map_ranges.c: the ranges /tmp/perf-PID.map declares that `in_module` holds (read by the
 * sampler thread: what the file grew by since the last read), and the ranges kept so far, sorted. */
void ss_perf_map_read(int (*in_module)(uintptr_t low, uintptr_t high));
size_t ss_perf_map_ranges(const ss_code_range **ranges);

/* code_ranges.c: executable memory no loaded module accounts for (JIT code), from /proc/self/maps,
 * and the code /tmp/perf-PID.map declares inside modules.
 * ss_code_ranges_contain is signal-safe; a walk that met a pc outside every module's rows asks for
 * a new read with ss_code_ranges_want_refresh (lock-free), which the sampler thread's next
 * ss_code_ranges_refresh does. */
/* Whether one range holds every address from `low` to `high` (both included). */
SS_HIDDEN int ss_code_ranges_contain(uintptr_t low, uintptr_t high);
SS_HIDDEN void ss_code_ranges_want_refresh(void);
void ss_code_ranges_reset_after_fork(void);

/* frame_pointer_step.c: the registers a step by frame pointer reads and moves. */
typedef struct {
    uintptr_t pc, sp, fp;
    int fp_known;
} ss_frame_registers;
/* Moves `regs` from a frame without CFI (`row` is what the index had for its pc: NULL or
 * SS_ROW_NONE) to its caller by frame pointer, where every part of the step is checked; returns
 * 0, leaving `regs`, where it is not. `exact_pc`: the interrupted pc (the leaf), not a return
 * address. Signal-safe if `read` is. */
SS_HIDDEN int ss_frame_pointer_step(const ss_module_index *index, const ss_unwind_row *row, ss_frame_registers *regs,
                                    int exact_pc, ss_memory_reader read, void *context);

/* unwind.c: the walk through an entered index (ss_unwind_stack enters one itself), from the
 * interrupted pc, sp, rbp and rbx (`*_known` 0 when not known); `frame_pointer_steps` counts the
 * steps taken by frame pointer through code without CFI. */
SS_HIDDEN int ss_unwind_walk(const ss_module_index *index, uintptr_t pc, uintptr_t sp, uintptr_t fp, int fp_known,
                             uintptr_t rbx, int rbx_known, ss_memory_reader read, void *context, uintptr_t *frames,
                             int capacity, int *outcome, int *frame_pointer_steps);

/* What a walk notes for the Swift async chain (async_stack.c): the frame the runtime's
 * job-running function called, and r14 (the async context register) in that frame. */
typedef struct {
    uintptr_t job_low, job_high; /* in: the job-running function's code, [low, high) */
    uintptr_t r14;               /* in: r14 at the interrupted pc */
    int frame;                   /* out: index of that frame in the walk's frames, -1 if none */
    int context_known;           /* out: whether r14 in that frame is known (its CFI rules) */
    uintptr_t context;           /* out: r14 in that frame */
} ss_async_probe;

/* ss_unwind_walk that also follows r14 and fills `probe` (which may be NULL). */
SS_HIDDEN int ss_unwind_walk_probed(const ss_module_index *index, uintptr_t pc, uintptr_t sp, uintptr_t fp,
                                    int fp_known, uintptr_t rbx, int rbx_known, ss_memory_reader read, void *context,
                                    uintptr_t *frames, int capacity, int *outcome, int *frame_pointer_steps,
                                    ss_async_probe *probe);

/* async_runtime.c: the Swift concurrency runtime's job-running function, found when the
 * module cache sees the runtime (outside signal context, under the loader's lock). */
SS_HIDDEN void ss_async_runtime_note(const struct dl_phdr_info *info);
/* Signal-safe: nonzero, with the job-running function's range, when async stacks are on
 * and the runtime loaded is one whose context layout was checked. */
SS_HIDDEN int ss_async_runtime_job_range(uintptr_t *low, uintptr_t *high);

/* async_stack.c: replaces the frames above probe->frame by the async chain from the probe's
 * context; counts the outcome. Returns the sample's new depth and sets `async_frames`, or
 * returns -1 and leaves the machine frames when there is no whole chain. Signal-safe if
 * `read` is. */
SS_HIDDEN int ss_async_splice(const ss_module_index *index, const ss_async_probe *probe, ss_memory_reader read,
                              uintptr_t *frames, int count, int capacity, uint16_t *async_frames);
/* Counts a chain whose read faulted (the handler's guard caught it). */
SS_HIDDEN void ss_async_count_fault(void);

/* sampler_sleep.c: whether ss_sampler_wake() was called since the session's reset. */
SS_HIDDEN int ss_sampler_stop_requested(void);
/* Wakes the sampler thread to refresh the module copy (SS_WOKEN_TO_REFRESH). Takes no lock, so
 * any thread may call it, whatever it holds (the handler, a fork). */
void ss_sampler_request_refresh(void);

/* random_draws.c: uniform in [0, 1), per process (reseeded in a forked child). Not thread-safe:
 * engines draw under the registry's lock. */
double ss_random_unit(void);

/* thread_registry.c: open from the engine's start to its stop, with the session's engine
 * (sampling_engine.h); threads attached while `deferred` are armed by ss_registry_arm_deferred(),
 * or, with the engine `presumed`, only noted then and attached by the engine it is given. */
struct ss_sampling_engine;
void ss_registry_open(const struct ss_sampling_engine *engine, int deferred, int presumed);
void ss_registry_arm_deferred(const struct ss_sampling_engine *engine);
/* Detaches every thread and refuses attaches until the next open. */
void ss_registry_close(void);
void ss_registry_forget_after_fork(void);

/* engine_perf_events.c: a descriptor of the engine's other than a counter (a held /proc file)
 * takes a place among the counters, within their bound: `fd`, the file `identity` names, moved
 * there (the number returned), or given back and -EMFILE. Each place taken is given back with ss_engine_release_descriptor. */
int ss_engine_place_descriptor(int fd, const ss_file_identity *identity);
void ss_engine_release_descriptor(void);

/* signal_hooks.c: whether the program has a handler of its own for `signo` (one the engine
 * handles, its action remembered). */
int ss_program_handles_signal(int signo);
/* thread_hooks.c: a forked child has none of the profiler's threads. */
void ss_profiler_threads_forget_after_fork(void);
/* blocked_position.c: a forked child closes its copies of the held files, where still ours. */
void ss_held_files_forget_after_fork(void);
/* The calling thread blocks (`blocked`) or unblocks the engine's signal: its sampling is
 * disarmed or armed again, and then its mask set to `mask`. */
void ss_thread_mask_engine_signal(int blocked, const sigset_t *mask);
/* Whether any attached thread is noted as blocking the engine's signal (disarmed). Lock-free. */
int ss_thread_any_blocked(void);

/* stack_bounds.c: the calling thread (made through pthread_create) notes its stack's low end;
 * the engine's start notes the main thread's. ss_stack_low() is the calling thread's, 0 when
 * unknown; signal-safe. */
void ss_stack_note_current_thread(void);
void ss_stack_note_main_thread(void);
SS_HIDDEN uintptr_t ss_stack_low(void);

/* real_sigmask.c: libc's pthread_sigmask, for the engine's own changes of mask. */
int ss_real_sigmask(int how, const sigset_t *set, sigset_t *old);
/* mask_hooks.c: takes the engine's signals `signo` off the calling thread's queue, and queues the program's
 * own of that number again, in their order. Past 32 of the program's own (only a real-time
 * signal queues that many) the rest is left pending as it is: better one of ours left than
 * one of the program's lost. */
void ss_discard_pending_own_signals(int signo);

/* signal_hooks.c: the real sigaction; ss_signal_take installs `handler` on
 * `signo` and remembers the program's action there, to chain to it;
 * ss_signal_is_virtualized says whether `signo` was taken so. */
int ss_real_sigaction(int signo, const struct sigaction *action, struct sigaction *previous);
int ss_signal_is_virtualized(int signo);
int ss_signal_take(int signo, void (*handler)(int, siginfo_t *, void *));
void ss_chain_to_program(int signo, siginfo_t *info, void *context);

/* handler.c */
int ss_handler_install(int preferred_signo);
int ss_fault_guard_install(void);
void ss_handler_reset_after_fork(void);
void ss_handler_deactivate(void);

/* session_hooks.c: keeps `hooks` as the calling process's (ss_set_session_hooks, engine.c, also
 * readies fork and exec); the hooks registered by process `process`, or NULL if it registered
 * none (a vfork child shares the memory of a parent that did). */
void ss_session_hooks_keep(const ss_session_hooks *hooks);
const ss_session_hooks *ss_session_hooks_of(pid_t process);

/* exec_hooks.c: looks up libc's exec functions now, not at the first exec. */
void ss_exec_hooks_resolve(void);

/* fork_quiesce.c: pthread_atfork handlers. ss_fork_child() resets the quiescing state in the
 * child, sets `parent` to the pid that forked, and says whether the sampler held nothing. */
void ss_fork_prepare(void);
void ss_fork_parent(void);
int ss_fork_child(pid_t *parent);

/* loader_lock.c: the loader's write lock (dl_iterate_phdr's), which fork does not reset.
 * ss_loader_lock_locate() finds it, once, outside any loader call; in a forked child,
 * ss_loader_lock_state_now() says whether a thread of the parent held it at the fork. */
typedef enum { SS_LOADER_LOCK_FREE, SS_LOADER_LOCK_HELD, SS_LOADER_LOCK_UNKNOWN } ss_loader_lock_state;
void ss_loader_lock_locate(void);
ss_loader_lock_state ss_loader_lock_state_now(void);

#endif
