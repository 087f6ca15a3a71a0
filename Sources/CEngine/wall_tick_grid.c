/*
 * Wall mode: which of a running thread's signals are worth a walk.
 *
 * The sampler thread counts ticks on a grid, origin + k x period (ss_wall_tick_grid_set), and
 * counts a running thread's tick with the sample of it nearest in its CPU time. The thread's
 * CPU time only grows with the clock, so that sample is its last before the tick or its first
 * after it: no other sample's stack is ever counted. The handler walks
 *  - the first signal after each tick, always;
 *  - a signal after which the next cannot come before the next tick (the next comes a sample
 *    period of CPU time later, so at least that much later by the clock): the last before it.
 * Any other signal is answered without a walk, and counted (ss_wall_signals_unwalked). A thread
 * preempted (or put to sleep: its sleep is walked instead) after a signal it could not know was
 * its last before a tick has that tick counted with the nearer of the walked samples around it:
 * within a sample period of CPU time of the truth, against half of one with every signal walked.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

static _Atomic uint64_t grid_origin_ns, grid_interval_ns;
static _Atomic uint64_t signals_unwalked;
/* The tick the calling thread's last walked signal came after, on the grid of that origin. */
static SS_TLS uint64_t walked_origin_ns, walked_tick;
static SS_TLS int walked_any;

void ss_wall_tick_grid_set(uint64_t origin_ns, uint64_t interval_ns) {
    atomic_store(&grid_interval_ns, 0);
    atomic_store(&grid_origin_ns, origin_ns);
    atomic_store(&grid_interval_ns, interval_ns);
}

uint64_t ss_wall_signals_unwalked(void) { return atomic_load_explicit(&signals_unwalked, memory_order_relaxed); }

int ss_wall_signal_needs_walk(uint64_t now, uint64_t sample_cpu_period_ns) {
    uint64_t interval = atomic_load_explicit(&grid_interval_ns, memory_order_acquire);
    uint64_t origin = atomic_load_explicit(&grid_origin_ns, memory_order_relaxed);
    if (interval == 0 || now < origin) return 1;
    uint64_t tick = (now - origin) / interval;
    if (!walked_any || walked_origin_ns != origin || walked_tick != tick) {
        walked_any = 1;
        walked_origin_ns = origin;
        walked_tick = tick;
        return 1;
    }
    if (now + sample_cpu_period_ns > origin + (tick + 1) * interval) return 1;
    atomic_fetch_add_explicit(&signals_unwalked, 1, memory_order_relaxed);
    return 0;
}
