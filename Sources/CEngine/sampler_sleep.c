/* The sampler thread's pause between ticks, which stop() ends and dlclose() interrupts.
 *
 * A futex word rather than clock_nanosleep: without it, stopping waited for the sampler's
 * next tick (up to 100 ms in cpu mode), and that wait was added to the run time of every
 * profiled program at exit. */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { WAKE_STOP = 1, WAKE_REFRESH = 2, WAKE_THREAD = 4 };

/* WAKE_STOP once ss_sampler_wake() was called since the last ss_sampler_sleep_reset();
 * WAKE_REFRESH while a refresh asked for by ss_sampler_request_refresh() is pending. */
static _Atomic uint32_t wake_word;
/* Set while the sampler thread sleeps and wants to know of a new thread at once: the first one
 * clears it and wakes the sampler, so that a burst of threads costs one wake. */
static _Atomic int waiting_for_threads;

void ss_sampler_sleep_reset(void) {
    atomic_store_explicit(&wake_word, 0, memory_order_release);
}

static uint64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static int sleep_until(uint64_t deadline_ns) {
    const struct timespec deadline = {
        .tv_sec = (time_t)(deadline_ns / 1000000000u),
        .tv_nsec = (long)(deadline_ns % 1000000000u),
    };
    for (;;) {
        uint32_t word = atomic_load_explicit(&wake_word, memory_order_acquire);
        if (word & WAKE_STOP) return SS_WOKEN_TO_STOP;
        if (word & (WAKE_REFRESH | WAKE_THREAD)) {
            uint32_t taken = word & WAKE_REFRESH ? WAKE_REFRESH : WAKE_THREAD;
            atomic_fetch_and_explicit(&wake_word, ~taken, memory_order_acq_rel);
            return taken == WAKE_REFRESH ? SS_WOKEN_TO_REFRESH : SS_WOKEN_FOR_THREAD;
        }
        if (monotonic_ns() >= deadline_ns) return SS_WOKEN_AT_DEADLINE;
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline; it returns at once
         * (EAGAIN) if the word changed after the load above, so no wake is missed. */
        long status = syscall(SYS_futex, &wake_word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, word,
                              &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        if (status == 0 || errno == EINTR || errno == EAGAIN || errno == ETIMEDOUT) continue;
        /* The futex refused (a seccomp filter, an emulator): sleep the plain way. */
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {}
    }
}

/* The first fields of the kernel's struct sched_attr (SCHED_ATTR_SIZE_VER0). */
struct sched_attr_v0 {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

/* Asks the scheduler for slices of 100 us for the calling thread (the shortest it grants), its
 * policy and nice value unchanged: since Linux 6.12 a thread that wakes with a shorter slice
 * than the one running may preempt it (EEVDF's PREEMPT_SHORT), where it would otherwise wait
 * for that thread's slice to end. Its share of the CPU is its nice value's, as before. No
 * privilege is needed; an older kernel takes the call and ignores the slice. Only
 * under the usual policy: a program run under another (SCHED_BATCH, SCHED_IDLE, real time, or
 * with SCHED_RESET_ON_FORK) keeps it for the sampler thread too. */
static void ask_for_short_slices(void) {
    if (sched_getscheduler(0) != SCHED_OTHER) return;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* the calling thread's */
    if (nice == -1 && errno != 0) return;
    struct sched_attr_v0 attr = {.size = sizeof attr, .policy = SCHED_OTHER, .nice = nice, .runtime = 100000};
    syscall(SYS_sched_setattr, 0, &attr, 0U);
}

/* Whether the calling thread's timer slack is down to 1 ns and its slices short. A thread's
 * timer expires up to its slack (50 us by default) late, so that expiries can be merged; the
 * wall sampler's wake must come soon after its tick to walk a sleep the tick landed in before it
 * ends: on a service of 200 us sleeps, 17 % fewer ticks were lost (a sleep over before it was
 * walked), at the same CPU for the sampler thread (wakes are no more frequent; only the sampler
 * thread's slack changes). The short slices are for the same reason: on a busy machine the wake
 * came some 100 us after its tick, the woken sampler waiting for a core. */
static SS_TLS int punctual;

int ss_sampler_sleep_until(uint64_t deadline_ns, int wake_for_new_thread) {
    if (!punctual) {
        prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        ask_for_short_slices();
        punctual = 1;
    }
    atomic_store_explicit(&waiting_for_threads, wake_for_new_thread != 0, memory_order_release);
    int woken = sleep_until(deadline_ns);
    atomic_store_explicit(&waiting_for_threads, 0, memory_order_release);
    return woken;
}

static void wake_with(uint32_t reason) {
    atomic_fetch_or_explicit(&wake_word, reason, memory_order_acq_rel);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
}

void ss_sampler_wake(void) { wake_with(WAKE_STOP); }

int ss_sampler_stop_requested(void) { return (atomic_load_explicit(&wake_word, memory_order_acquire) & WAKE_STOP) != 0; }

void ss_sampler_request_refresh(void) { wake_with(WAKE_REFRESH); }

void ss_sampler_note_new_thread(void) {
    if (atomic_load_explicit(&waiting_for_threads, memory_order_acquire) && atomic_exchange(&waiting_for_threads, 0))
        wake_with(WAKE_THREAD);
}
