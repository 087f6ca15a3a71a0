/*
 * The contract every engine, a way of making the threads' signals, meets: one file per engine
 * (engine_cpu_timers.c, engine_perf_events.c), listed in engines.c, chosen by the session's mode
 * in engine.c and handed to the registry (thread_registry.c), which keeps the attached threads
 * and calls the engine for each; an engine keeps its per-thread resource in the handle the
 * registry stores for it. The signal handler (handler.c) knows an engine only through the last
 * two members. Adding an engine touches no other engine: its file, its entry in engines.c and
 * its choice in engine.c.
 *
 * Wall mode is no engine of its own: the sampler thread (WallScheduler.swift) accounts every
 * tick of every thread from the perf engine's samples of the threads that run, the context
 * switches a ring per thread tells (switch_ring.c), and walks, without a signal, of the threads
 * blocked in a call (ss_unwind_stack).
 *
 * attach to schedule_sequence are never called in signal context; the registry's lock
 * serialises them. owns_signal and sample_taken are the handler's: signal-safe.
 */
#ifndef STACKSAMPLER_SAMPLING_ENGINE_H
#define STACKSAMPLER_SAMPLING_ENGINE_H

#include "engine_internal.h"

#include <signal.h>
#include <stdint.h>

typedef struct ss_sampling_engine {
    /* For the summary: what produced the samples. */
    const char *name;
    /* Prepares sampling thread `tid`, armed now or (with `armed` 0) only at `arm`; sets its
     * handle (-1 when it needs none). Returns 0 or -errno. */
    int (*attach)(int32_t tid, int armed, int *handle);
    /* Starts the sampling of a thread attached unarmed, or disarmed. Returns 0 or -errno. */
    int (*arm)(int handle);
    /* Stops the sampling of a thread (it blocks the engine's signal) until `arm`; no signal of
     * the handle's is sent after it returns. */
    void (*disarm)(int handle);
    /* Releases what `attach` made. */
    void (*detach)(int handle);
    /* Nonzero when the handle no longer samples its thread: it belongs to an earlier thread of
     * the same tid that has exited (its tid reused), or the program closed it. The thread must
     * be attached again. */
    int (*orphaned)(int handle);
    /* In a forked child: releases what the handle holds in this process (the child samples
     * none of the parent's threads). */
    void (*forget_after_fork)(int handle);
    /* A number that changes every time the handle's thread gets a core while its sampling is
     * armed, read without a system call, or -1 when the engine cannot tell; NULL for an engine
     * that never can. The sampler thread's check that a thread asleep has not run since. */
    int64_t (*schedule_sequence)(int handle);
    /* Whether `info`, a signal of the engine's number, is one this engine raised (now or in an
     * earlier session): its timer's cookie, its counter's descriptor. Any thread. */
    int (*owns_signal)(const siginfo_t *info);
    /* A signal this engine owns arrived on the thread it signalled: the engine's account of it.
     * Returns 0 when it stands for no sample (a counter's overflow left over from its random
     * first period), which the handler then does not record. */
    int (*sample_taken)(const siginfo_t *info);
    /* The CPU time of a running thread between two of its signals, in the session's mode. */
    uint64_t (*sample_cpu_period)(void);
} ss_sampling_engine;

/* cpu mode: a timer on each thread's CPU-time clock, signalling that thread. */
SS_HIDDEN extern const ss_sampling_engine ss_cpu_timer_engine;
/* cpu mode (asked for) and wall mode: a perf_event task-clock counter per thread, in user space
 * only, its overflow signalling that thread. */
SS_HIDDEN extern const ss_sampling_engine ss_perf_event_engine;
/* engines.c: the engine that raised `info`, a signal of the engine's number, or NULL when
 * it is none of theirs (the program's own). Every engine is asked. Signal-safe. */
SS_HIDDEN const ss_sampling_engine *ss_engine_of_signal(const siginfo_t *info);
/* engine_perf_events.c: 0 when this process may open counters of the session's event (in user
 * space only), else -errno. */
int ss_perf_events_available(void);
/* engine_perf_events.c: how many counters the process's descriptor limit leaves room for now
 * (a sixteenth of it), and the lowest number they take (`first`). */
int ss_perf_counter_room(int *first);
/* Fewer counters than this, and an automatic choice runs the timers instead (engine.c). */
enum { SS_PERF_MINIMUM_COUNTERS = 16 };
/* engine_perf_events.c: makes room in the descriptor table for the counters while the process
 * has one thread (cheap then; a wait for the kernel once threads share the table). */
void ss_perf_reserve_descriptors(void);

#endif
