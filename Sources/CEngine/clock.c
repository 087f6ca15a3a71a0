/*
 * The engine's clocks: CLOCK_MONOTONIC (the time of every sample and of the sampler's
 * deadlines), the scheduler's tick, and the CPU-time clock of any thread of the process.
 * Signal-safe.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <time.h>

uint64_t ss_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The scheduler tick: the kernel compares a thread's CPU time with its timers
 * only at a tick that finds the thread running. A coarse clock advances once
 * per tick, so its resolution is the tick's length (4 ms at HZ=250). */
uint64_t ss_scheduler_tick_ns(void) {
    struct timespec resolution;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) != 0) return 0;
    return (uint64_t)resolution.tv_sec * 1000000000u + (uint64_t)resolution.tv_nsec;
}

clockid_t ss_thread_cpu_clock(int32_t tid) {
    return (clockid_t)(((unsigned int)~tid << 3) | 6);
}

int64_t ss_thread_cpu_time_ns(int32_t tid) {
    struct timespec spent;
    if (clock_gettime(ss_thread_cpu_clock(tid), &spent) != 0) return -1;
    return (int64_t)spent.tv_sec * 1000000000 + spent.tv_nsec;
}
