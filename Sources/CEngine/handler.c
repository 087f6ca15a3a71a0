/*
 * The signal handler and its installation. The handler runs on whatever the
 * thread was doing (malloc, the loader, a libunwind of the program's): it asks
 * the engines whose signal it is (engines.c), reads the clock, walks the stack
 * through the engine's own unwind tables (unwind.c) from the interrupted
 * registers, and writes into a preallocated slot. No allocation, no locks, no
 * per-thread preparation, errno preserved.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/auxv.h>

#ifndef AT_MINSIGSTKSZ
#define AT_MINSIGSTKSZ 51
#endif
#include <sys/syscall.h>

/* Where a fault inside the unwinder returns to: the sample ends there. */
static SS_TLS sigjmp_buf unwind_escape;
static SS_TLS volatile sig_atomic_t unwinding;
/* SIGSEGV and SIGBUS sent by a process during an unwind, kept back until the
 * sample ends (si_signo 0: none). */
static SS_TLS siginfo_t deferred_faults[2];

static _Atomic int handler_active;
static _Atomic uint64_t foreign_signals;
static _Atomic uint64_t handler_histogram[SS_HANDLER_HISTOGRAM_BUCKETS];
/* Stack the walk needs below the handler's frame on an alternate stack: its own use
 * (measured: see docs/design.md, Stack room) with a margin, then the kernel's frame for a fault inside it
 * and the fault guard's own use. */
enum { WALK_STACK_BYTES = 1024 };
static uintptr_t walk_room_needed = WALK_STACK_BYTES + 4096;
enum { REFRESH_REQUEST_INTERVAL_NS = 10000000 };
static _Atomic uint64_t last_refresh_request;

/* The calling thread's CPU time in ns, or -1. */
static int64_t own_cpu_ns(void) {
    struct timespec spent;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent) != 0) return -1;
    return (int64_t)spent.tv_sec * 1000000000 + spent.tv_nsec;
}

/* A handler that took longer than this by the clock was most often preempted (see handler_ends). */
enum { PREEMPTED_HANDLER_NS = 20000 };

/* The thread's CPU time as a handler entered at `entered` with CPU time `cpu_entered` (wall
 * mode; -1 otherwise) ends, and what the handler cost (`*spent`): the time since it entered.
 * When that is long, the thread was most often preempted in the handler, and the time it spent
 * off its core is other threads' work: the CPU time is read again and the handler costs the CPU
 * time since it entered (measured on a service of 4 workers on 2 cores: 1 % of the handlers
 * took 100 us or more by the clock, and the whole lot 38 ms in 10 s; by the CPU time of those,
 * the 99th percentile is 6 us and the whole 29 ms). Otherwise the CPU time now is the CPU time
 * at entry and the time since, without a second read (off by no more than a short preemption,
 * in the direction of a thread that has not run since). */
static int64_t handler_ends(uint64_t entered, int64_t cpu_entered, uint64_t *spent) {
    uint64_t elapsed = ss_now_ns() - entered;
    *spent = elapsed;
    if (cpu_entered < 0) return -1;
    if (elapsed < PREEMPTED_HANDLER_NS) return cpu_entered + (int64_t)elapsed;
    int64_t cpu = own_cpu_ns();
    if (cpu < cpu_entered) return cpu_entered + (int64_t)elapsed;
    *spent = (uint64_t)(cpu - cpu_entered);
    return cpu;
}

static void count_handler_time(uint64_t nanoseconds) {
    uint64_t bucket = nanoseconds / SS_HANDLER_HISTOGRAM_BUCKET_NS;
    if (bucket >= SS_HANDLER_HISTOGRAM_BUCKETS) bucket = SS_HANDLER_HISTOGRAM_BUCKETS - 1;
    atomic_fetch_add_explicit(&handler_histogram[bucket], 1, memory_order_relaxed);
}

void ss_handler_histogram(uint64_t *buckets) {
    for (int i = 0; i < SS_HANDLER_HISTOGRAM_BUCKETS; i++)
        buckets[i] = atomic_load_explicit(&handler_histogram[i], memory_order_relaxed);
}

/* Reads the stack with plain loads: a fault ends the sample through the guard. */
static int read_directly(uintptr_t address, uintptr_t *value, void *context) {
    (void)context;
    *value = *(const volatile uintptr_t *)address;
    return 0;
}

/* Whether the handler has room to walk: it needs room for the walk and for the frame
 * of a fault the guard may have to catch, below its own frame. On an alternate signal
 * stack (the thread was in a handler of its own on it) the kernel saved the stack's
 * bounds in the context; on the thread's own stack the bound noted for the thread is
 * used (stack_bounds.c), and where none is known the walk goes ahead. */
static int room_to_walk(const ucontext_t *context) {
    const stack_t *alternate = &context->uc_stack;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    uintptr_t low = (uintptr_t)alternate->ss_sp, high = low + alternate->ss_size;
    if ((alternate->ss_flags & SS_DISABLE) || here < low || here >= high) low = ss_stack_low();
    if (low == 0 || here < low) return 1;
    return here - low >= walk_room_needed;
}

/* A walk that ended early may have met a module loaded since the last refresh (dlopen is
 * not interposed), or one of the profiler's own modules, whose tables are compiled only once
 * a walk needs them: the sampler thread is woken to compile its table, at most every
 * REFRESH_REQUEST_INTERVAL_NS (code that never has unwind info, JIT code, would otherwise
 * wake it at every sample). Lock-free: an atomic store and a futex wake. */
static void ask_for_tables(uint64_t now) {
    ss_module_cache_want_own_tables();
    uint64_t last = atomic_load_explicit(&last_refresh_request, memory_order_relaxed);
    if (now - last < REFRESH_REQUEST_INTERVAL_NS) return;
    if (atomic_compare_exchange_strong_explicit(&last_refresh_request, &last, now, memory_order_relaxed,
                                                memory_order_relaxed))
        ss_sampler_request_refresh();
}

/* After the guard caught a fault: the kernel blocked the fault signals for on_fault, which
 * jumped out instead of returning. */
static void unblock_faults(void) {
    sigset_t faults;
    sigemptyset(&faults);
    sigaddset(&faults, SIGSEGV);
    sigaddset(&faults, SIGBUS);
    ss_real_sigmask(SIG_UNBLOCK, &faults, NULL);
}

/* A Swift job's sample: the async chain in place of the executor frames (async_stack.c),
 * which makes the stack whole from the task's first function whatever ended the walk above
 * it (its flags go). A fault reading the chain leaves the machine stack already walked. */
static void record_async_chain(ss_sample *sample, const ss_module_index *index, const ss_async_probe *probe, int count) {
    if (sigsetjmp(unwind_escape, 0) == 0) {
        int depth = ss_async_splice(index, probe, read_directly, sample->frames, count,
                                    (int)ss_active_config.max_depth, &sample->async_frames);
        if (depth >= 0) {
            sample->depth = (uint16_t)depth;
            sample->flags = SS_SAMPLE_ASYNC;
        }
    } else {
        ss_async_count_fault();
        unblock_faults();
    }
}

SS_HANDLER_CODE static void record_sample(const ucontext_t *context, const siginfo_t *info, const ss_sampling_engine *engine) {
    uint64_t entered = ss_now_ns();
    /* Wall mode: a signal whose stack no tick can take is not walked (wall_tick_grid.c). */
    if (ss_active_config.mode == SS_MODE_WALL && !ss_wall_signal_needs_walk(entered, engine->sample_cpu_period())) {
        count_handler_time(ss_now_ns() - entered);
        return;
    }
    ss_sample *sample = ss_buffer_claim();
    if (!sample) return;
    /* Wall mode: the thread's CPU time, by which ticks are matched to samples. */
    int64_t cpu_entered = ss_active_config.mode == SS_MODE_WALL ? own_cpu_ns() : -1;
    sample->time_ns = entered;
    sample->tid = ss_current_tid();
    sample->flags = 0;
    sample->async_frames = 0;
    sample->periods = 1 + (info->si_code == SI_TIMER && info->si_overrun > 0 ? (uint32_t)info->si_overrun : 0);
    const greg_t *registers = context->uc_mcontext.gregs;
    sample->frames[0] = (uintptr_t)registers[REG_RIP];
    sample->depth = 1;
    if (!room_to_walk(context)) {
        sample->flags = SS_SAMPLE_LEAF_ONLY;
    } else {
        int buffer = -1, outcome = SS_WALK_ENDED_EARLY, count = 1, frame_pointer_steps = 0;
        const ss_module_index *index = ss_module_index_enter(&buffer);
        unwinding = 1;
        ss_async_probe probe = {.r14 = (uintptr_t)registers[REG_R14], .frame = -1};
        int async = ss_async_runtime_job_range(&probe.job_low, &probe.job_high);
        if (sigsetjmp(unwind_escape, 0) == 0) {
            count = ss_unwind_walk_probed(index, (uintptr_t)registers[REG_RIP], (uintptr_t)registers[REG_RSP],
                                          (uintptr_t)registers[REG_RBP], 1, (uintptr_t)registers[REG_RBX], 1, read_directly,
                                          NULL, sample->frames, (int)ss_active_config.max_depth, &outcome,
                                          &frame_pointer_steps,
                                          async ? &probe : NULL);
            count = ss_leave_out_own_code(sample->frames, count, &probe.frame);
            sample->depth = (uint16_t)count;
            sample->flags = outcome == SS_WALK_TRUNCATED ? SS_SAMPLE_TRUNCATED
                          : outcome == SS_WALK_ENDED_EARLY ? SS_SAMPLE_UNWIND_FAILED : 0;
            if (frame_pointer_steps > 0) sample->flags |= SS_SAMPLE_FRAME_POINTERS;
            if (probe.frame >= 0) record_async_chain(sample, index, &probe, count);
        } else {
            sample->depth = 1;
            sample->flags = SS_SAMPLE_UNWIND_FAULTED;
            unblock_faults();
        }
        unwinding = 0;
        if (index) ss_module_index_leave(buffer);
        if (sample->flags & SS_SAMPLE_UNWIND_FAILED) ask_for_tables(entered);
    }
    /* As the handler ends: a thread that has not run since has this CPU time still. */
    uint64_t spent;
    sample->cpu_ns = handler_ends(entered, cpu_entered, &spent);
    ss_buffer_publish(sample);
    count_handler_time(spent);
}

/* Sends again, now that the sample is over, the faults on_fault kept back
 * (the thread's own process may give any si_code). */
static void deliver_deferred_faults(void) {
    for (int i = 0; i < 2; i++) {
        if (!deferred_faults[i].si_signo) continue;
        siginfo_t info = deferred_faults[i];
        deferred_faults[i].si_signo = 0;
        syscall(SYS_rt_tgsigqueueinfo, ss_own_pid(), ss_current_tid(), info.si_signo, &info);
    }
}

SS_HANDLER_CODE static void on_sample_signal(int signo, siginfo_t *info, void *context) {
    int saved_errno = errno;
    const ss_sampling_engine *engine = ss_engine_of_signal(info);
    if (engine) {
        /* The engine's account of its signal comes first, whether or not a sample is recorded. */
        int counts = engine->sample_taken(info);
        if (counts && atomic_load_explicit(&handler_active, memory_order_relaxed) && !ss_tls_excluded)
            record_sample(context, info, engine);
        deliver_deferred_faults();
    } else {
        atomic_fetch_add_explicit(&foreign_signals, 1, memory_order_relaxed);
        errno = saved_errno;
        ss_chain_to_program(signo, info, context);
    }
    errno = saved_errno;
}

/* A fault the kernel raised while unwinding (si_code > 0) ends that sample.
 * One sent by a process (kill, tgkill, sigqueue: si_code <= 0) is as
 * asynchronous as any signal the handler blocks: it waits for the sample's
 * end, like those, and then goes to the program with its siginfo as sent.
 * Any other goes to the program. */
SS_HANDLER_CODE static void on_fault(int signo, siginfo_t *info, void *context) {
    if (unwinding && info->si_code > 0) {
        unwinding = 0;
        siglongjmp(unwind_escape, 1);
    }
    if (unwinding) {
        deferred_faults[signo == SIGBUS] = *info;
        return;
    }
    int saved_errno = errno;
    ss_chain_to_program(signo, info, context);
    errno = saved_errno;
}

int ss_fault_guard_install(void) {
    if (ss_signal_take(SIGSEGV, on_fault) != 0 || ss_signal_take(SIGBUS, on_fault) != 0) return SS_ERR_NO_SIGNAL;
    return SS_OK;
}

void ss_handler_reset_after_fork(void) { atomic_store(&handler_active, 0); }

int ss_handler_install(int preferred_signo) {
    int status = ss_sampling_signal_take(preferred_signo, on_sample_signal);
    if (status != SS_OK) return status;
    unsigned long kernel_frame = getauxval(AT_MINSIGSTKSZ);
    walk_room_needed = WALK_STACK_BYTES + (kernel_frame > 2048 ? kernel_frame : 2048) + WALK_STACK_BYTES;
    ss_identity_note_process();
    ss_stack_note_main_thread();
    atomic_store(&handler_active, 1);
    return SS_OK;
}

/* The handler is left installed but inert: a signal still pending when
 * sampling stops must not meet the default action (which would kill). */
void ss_handler_deactivate(void) {
    atomic_store(&handler_active, 0);
}

uint64_t ss_engine_foreign_signals(void) { return atomic_load(&foreign_signals); }
