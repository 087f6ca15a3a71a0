/*
 * Engine lifecycle: configuration, buffer, unwind tables and handler set up once;
 * the sampler thread, as it starts, finishes what the start left to it; stop
 * disarms every timer and leaves the handler inert. The session owner's hooks are
 * registered here, with fork and exec readied for them.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int initialised;
static char engine_description[384];
/* The session's engine; while `probe_pending`, the perf engine presumed until the sampler
 * thread (or the stop, if it comes first) has asked the kernel. */
static const ss_sampling_engine *session_engine;
static _Atomic int probe_pending;

const char *ss_engine_description(void) { return engine_description; }

int ss_engine_counts_kernel_time(void) { return session_engine != &ss_perf_event_engine; }

uint64_t ss_engine_sample_spacing_ns(void) {
    const ss_sampling_engine *engine = session_engine;
    return engine ? engine->sample_cpu_period() : ss_wall_counter_period(ss_active_config.period_ns);
}

/* The perf engine once the kernel has been asked, described; else the timers, or NULL when
 * the counters were asked for by name and cannot run. Task-clock counters count user space
 * only (exclude_kernel), whatever the kernel allows: a counter that counts the kernel's time
 * overflows inside system calls too, and its signal, raised there, makes a `poll` or
 * `nanosleep` the thread is entering return EINTR (17 to 25 in 10,000 1 ms polls at 1 ms,
 * measured here). The summary's `counts:` line says how much of the threads' CPU the counters
 * could not see. */
static const ss_sampling_engine *settle_engine(const ss_config *config) {
    int perf = ss_perf_events_available();
    int first, room = ss_perf_counter_room(&first);
    int automatic = config->engine == SS_ENGINE_AUTOMATIC && !config->event_period;
    if (perf == 0 && automatic && room < SS_PERF_MINIMUM_COUNTERS) {
        snprintf(engine_description, sizeof engine_description,
                 "%s (the descriptor limit, ulimit -n, leaves room for %d perf counters only)", ss_cpu_timer_engine.name,
                 room);
        return &ss_cpu_timer_engine;
    }
    if (perf == 0 && config->event_period) {
        snprintf(engine_description, sizeof engine_description, "perf_event counters, at most %d descriptors, numbered from %d",
                 room, first);
        return &ss_perf_event_engine;
    }
    if (perf == 0 && automatic && config->mode == SS_MODE_WALL) {
        snprintf(engine_description, sizeof engine_description,
                 "%s: a running thread's stack at the scheduler ticks (%llu us) that find it running, as "
                 "gperftools' setitimer does (--engine perf: counters that sample it every period of its CPU, at up "
                 "to four times the signals and the cost)",
                 ss_cpu_timer_engine.name, (unsigned long long)(ss_scheduler_tick_ns() / 1000));
        return &ss_cpu_timer_engine;
    }
    if (perf == 0) {
        const char *scope = config->mode == SS_MODE_WALL ? "signals in user space only (never inside a system call)"
                                                          : "user space only (time in the kernel is not sampled: see counts)";
        snprintf(engine_description, sizeof engine_description, "%s, %s, at most %d descriptors, numbered from %d",
                 ss_perf_event_engine.name, scope, room, first);
        return &ss_perf_event_engine;
    }
    if (config->engine == SS_ENGINE_PERF || config->event_period) {
        snprintf(engine_description, sizeof engine_description, "perf_event_open: %s", ss_perf_refusal_text(perf));
        return NULL;
    }
    /* What the refusal changes: in wall mode, a running thread's stack comes at the scheduler
     * ticks that find it running and its place from /proc, not from counters and switch records. */
    char change[160] = "";
    if (config->mode == SS_MODE_WALL)
        snprintf(change, sizeof change,
                 "; wall mode: a running thread's stack only at the scheduler ticks (%llu us) that find it running, "
                 "every thread's place read from /proc at each tick",
                 (unsigned long long)(ss_scheduler_tick_ns() / 1000));
    snprintf(engine_description, sizeof engine_description, "%s (perf_event_open: %s%s)", ss_cpu_timer_engine.name,
             ss_perf_refusal_text(perf), change);
    return &ss_cpu_timer_engine;
}

/* The perf engine, presumed and its probe left to the sampler thread when chosen automatically
 * with arming `deferred` (see choose_engine), else probed now. */
static const ss_sampling_engine *presume_or_probe_perf(const ss_config *config, int deferred) {
    if (deferred && config->engine == SS_ENGINE_AUTOMATIC && !config->event_period) {
        snprintf(engine_description, sizeof engine_description, "%s", ss_perf_event_engine.name);
        atomic_store(&probe_pending, 1);
        return &ss_perf_event_engine;
    }
    return settle_engine(config);
}

/* The engine of `config`'s mode and choice, described; NULL when the one asked for cannot run.
 * cpu mode runs the CPU-time timers unless counters are asked for (--engine perf, --event):
 * they count the threads' time in user space and in the kernel, and their signal is raised on
 * the way back to user space (POSIX_CPU_TIMERS_TASK_WORK), never inside a system call. Below
 * two scheduler ticks a timer fires at the next tick and its sample counts for every period it
 * covers (the summary's effective-rate line says so): the profile keeps its meaning, at a
 * coarser grain. Perf counters would sample at any period but see user space only (see
 * settle_engine). Wall mode samples running threads with the timers too unless counters are
 * asked for: at 1 kHz the counters' thousand signals a second slowed a busy thread by 3.0 %
 * and 8 on 2 cores by 7.7 %, the timers' 250 by 0.5 and 3.9 % (gperftools 0.6 and 2.2 %), and
 * the ticks between two timer samples are counted with the nearer, whose stack is at most a
 * tick of CPU away. It still asks the kernel first (the probe below): the switch records and
 * the preemption copies that make wall mode exact need perf_event_open, not the counters.
 * Chosen automatically with arming `deferred` (the preload's constructor, before main), the
 * perf engine is presumed and the probe left to the sampler thread with the counters
 * (ss_engine_sampler_starting), so the program does not wait for it (the first task-bound
 * counter in the system makes perf_event_open wait for an RCU grace period: 5.5 to 15 ms
 * measured here); asked for by name, the probe runs now, so that a refusal is an error at
 * start. */
static const ss_sampling_engine *choose_engine(const ss_config *config, int deferred) {
    if (config->mode == SS_MODE_WALL && config->engine != SS_ENGINE_TIMERS) return presume_or_probe_perf(config, deferred);
    if (config->event_period || config->engine == SS_ENGINE_PERF) return presume_or_probe_perf(config, deferred);
    uint64_t tick = ss_scheduler_tick_ns();
    if (config->engine == SS_ENGINE_TIMERS) {
        snprintf(engine_description, sizeof engine_description, "%s (asked for)", ss_cpu_timer_engine.name);
    } else if (config->period_ns < 2 * tick) {
        snprintf(engine_description, sizeof engine_description,
                 "%s, user and kernel time: below two scheduler ticks of %llu us a sample counts for the periods it "
                 "covers (perf counters would see user space only: --engine perf for them)",
                 ss_cpu_timer_engine.name, (unsigned long long)(tick / 1000));
    } else {
        snprintf(engine_description, sizeof engine_description,
                 "%s (the period is at least two scheduler ticks of %llu us; --engine perf for counters)",
                 ss_cpu_timer_engine.name, (unsigned long long)(tick / 1000));
    }
    return &ss_cpu_timer_engine;
}

/* The presumed perf engine settled: kept if the kernel opens counters, else the timers (the
 * description says why). Once, by the sampler thread as it starts or by the stop. */
static void settle_presumed_engine(void) {
    if (atomic_exchange(&probe_pending, 0)) session_engine = settle_engine(&ss_active_config);
}

/* Why a forked child cannot start a session, or NULL if it can. */
static const char *forked_child_refusal(int quiesced) {
    if (!quiesced) return "the sampler thread did not pause for fork()";
    switch (ss_loader_lock_state_now()) {
    case SS_LOADER_LOCK_FREE: return NULL;
    case SS_LOADER_LOCK_HELD: return "the loader's lock was held at fork() (dlopen, dlclose or dl_iterate_phdr in another thread)";
    case SS_LOADER_LOCK_UNKNOWN: break;
    }
    return "the loader's lock cannot be checked in this C library";
}

/* A forked child has only the forking thread, no timers and no sampler: the
 * engine there is stopped and empty, ready for a session of its own, which the
 * owner's hook starts only if no lock the session needs can be held for ever:
 * the parent's sampler thread held none at the fork (fork_quiesce.c), and no
 * thread held the loader's write lock, which fork does not reset (loader_lock.c).
 * Otherwise the child runs unprofiled, and says so. */
static void reset_in_forked_child(void) {
    pid_t parent;
    int quiesced = ss_fork_child(&parent);
    ss_session_set_running(0);
    ss_identity_note_process();
    ss_handler_reset_after_fork();
    ss_registry_forget_after_fork();
    ss_held_files_forget_after_fork();
    ss_profiler_threads_forget_after_fork();
    ss_module_cache_reset_after_fork();
    ss_code_ranges_reset_after_fork();
    ss_buffer_reset();
    const ss_session_hooks *hooks = ss_session_hooks_of(parent);
    if (!hooks || !hooks->start_in_forked_child) return;
    const char *refusal = forked_child_refusal(quiesced);
    if (!refusal) {
        /* The profiler's work on the program's thread: not sampled, as the stop's is not. */
        int was_excluded = ss_thread_set_excluded(1);
        hooks->start_in_forked_child((int32_t)parent);
        ss_thread_set_excluded(was_excluded);
        return;
    }
    char line[256];
    int length = snprintf(line, sizeof line, "stacksampler: %s; forked process %d is not profiled\n", refusal, (int)getpid());
    if (length > 0) (void)!write(STDERR_FILENO, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
}

static void install_fork_handlers(void) {
    ss_loader_lock_locate();
    pthread_atfork(ss_fork_prepare, ss_fork_parent, reset_in_forked_child);
}

/* Locates the loader's lock and installs the fork handlers, once per process: at the first
 * session, or when the session hooks are registered before any. */
static void watch_forks(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fork_handlers);
}

void ss_set_session_hooks(const ss_session_hooks *hooks) {
    ss_session_hooks_keep(hooks);
    /* A daemon serving on-demand sessions has no session yet: its children are still seen. */
    watch_forks();
    ss_exec_hooks_resolve();
}

int ss_engine_init(const ss_config *config) {
    if (ss_engine_running()) return SS_ERR_ALREADY_RUNNING;
    if (!config || config->period_ns == 0 || config->max_depth == 0 || config->max_depth > 65535 ||
        config->buffer_slots == 0)
        return SS_ERR_BAD_CONFIG;
    if (initialised && (config->max_depth != ss_active_config.max_depth ||
                        config->buffer_slots != ss_active_config.buffer_slots))
        return SS_ERR_BAD_CONFIG; /* the buffer is reserved once per process */
    int status;
    if (!initialised) {
        status = ss_buffer_create(config->buffer_slots, config->max_depth);
        if (status != SS_OK) return status;
        status = ss_fault_guard_install();
        if (status != SS_OK) return status;
        watch_forks();
    }
    /* Alone in the process (the preload's constructor, before main), the engine leaves the
     * unwind tables, and so the timers, to the sampler thread: the program starts without
     * waiting for them. With threads running, every table is made now. */
    ss_active_config = *config;
    int deferred = ss_proc_stat_field(0, 20) <= 1;
    atomic_store(&probe_pending, 0);
    const ss_sampling_engine *engine = choose_engine(config, deferred);
    if (!engine) return SS_ERR_ENGINE_UNAVAILABLE;
    session_engine = engine;
    /* The presumed engine's counters are opened by the sampler thread, moved above the
     * program's descriptors: the table is grown for them now, while it is cheap. */
    if (atomic_load(&probe_pending)) ss_perf_reserve_descriptors();
    ss_module_cache_prepare(deferred);
    /* SIGPROF in both modes: libdispatch blocks SIGALRM in its worker threads
     * (and threads they create inherit the mask), so wall mode on SIGALRM
     * would never sample a Swift program's concurrency pool. The engine's
     * signals carry a cookie, so the program's own SIGPROF stays its own. */
    status = ss_handler_install(SIGPROF);
    if (status != SS_OK) return status;
    initialised = 1;
    ss_registry_open(engine, deferred, atomic_load(&probe_pending));
    ss_session_set_running(1);
    return SS_OK;
}

void ss_engine_sampler_starting(void) {
    ss_module_cache_refresh(); /* every listed module's table: gives up once the sampler is stopped */
    if (ss_sampler_stop_requested()) return;
    settle_presumed_engine();
    ss_registry_arm_deferred(session_engine);
}

void ss_engine_stop(void) {
    if (!ss_session_set_running(0)) return;
    settle_presumed_engine(); /* a session stopped before its sampler started still says truly what ran */
    ss_registry_close();
    ss_handler_deactivate();
}
