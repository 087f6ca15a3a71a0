/* The sampler thread's pause between ticks, which stop() can cut short.
 *
 * A futex word rather than clock_nanosleep: without it, stopping waited for the sampler's
 * next tick (up to 20 ms in cpu mode), and that wait was added to the run time of every
 * profiled program at exit. */
#define _GNU_SOURCE
#include "stacksampler_engine.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Nonzero once ss_sampler_wake() was called since the last ss_sampler_sleep_reset(). */
static _Atomic uint32_t wake_requested;

void ss_sampler_sleep_reset(void) {
    atomic_store_explicit(&wake_requested, 0, memory_order_release);
}

int ss_sampler_sleep_until(uint64_t deadline_ns) {
    const struct timespec deadline = {
        .tv_sec = (time_t)(deadline_ns / 1000000000u),
        .tv_nsec = (long)(deadline_ns % 1000000000u),
    };
    for (;;) {
        if (atomic_load_explicit(&wake_requested, memory_order_acquire)) return 1;
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline; it returns at once
         * (EAGAIN) if the word changed after the check above, so no wake is missed. */
        long status = syscall(SYS_futex, &wake_requested, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0u,
                              &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        if (status != 0 && errno == ETIMEDOUT) return 0;
    }
}

void ss_sampler_wake(void) {
    atomic_store_explicit(&wake_requested, 1, memory_order_release);
    syscall(SYS_futex, &wake_requested, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}
