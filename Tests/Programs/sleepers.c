/* sleepers: what a wall-mode profiler must not disturb, and what it cannot sample.
 * For argv[1] seconds: threads sleep in 1 ms nanosleep calls (`nanosleeper`), 1 ms poll
 * timeouts (`poller`), polls on a pipe fed every millisecond (`pipe_reader`), 2 ms condition
 * variable waits (`cond_waiter`), each counting calls that ended early; `long_sleeper` makes one
 * sleep() of 0.6 of the run without retrying and prints what was left; one thread blocks
 * SIGPROF from its start and spins in `masked_spin`; the main thread spins in `main_spin`. Prints
 * `eintr_nanosleep`, `eintr_poll`, `eintr_pipe`, `spurious_cond`, `sleep_left` and `sleeps`.
 * Build: gcc -O2 -pthread -o sleepers sleepers.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static double seconds = 1.0;
static volatile int sleeps;
static volatile int eintr_nanosleep, eintr_poll, eintr_pipe, spurious_cond;
static volatile uint64_t sink;
static int feed[2];

static double end_time(void) { return clock_seconds(CLOCK_MONOTONIC) + seconds; }
static void count(volatile int *counter) { __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED); }

/* 1 ms nanosleep calls. */
static void *nanosleeper(void *unused) {
    (void)unused;
    for (const double end = end_time(); clock_seconds(CLOCK_MONOTONIC) < end; count(&sleeps)) {
        struct timespec pause = {0, 1000 * 1000};
        if (nanosleep(&pause, NULL) != 0 && errno == EINTR) count(&eintr_nanosleep);
    }
    return NULL;
}

/* 1 ms poll timeouts. */
static void *poller(void *unused) {
    (void)unused;
    for (const double end = end_time(); clock_seconds(CLOCK_MONOTONIC) < end; count(&sleeps))
        if (poll(NULL, 0, 1) < 0 && errno == EINTR) count(&eintr_poll);
    return NULL;
}

/* Polls a pipe that `feeder` writes a byte to about every millisecond. */
static void *pipe_reader(void *unused) {
    (void)unused;
    for (const double end = end_time(); clock_seconds(CLOCK_MONOTONIC) < end; count(&sleeps)) {
        struct pollfd readable = {feed[0], POLLIN, 0};
        int ready = poll(&readable, 1, 50);
        if (ready < 0 && errno == EINTR) count(&eintr_pipe);
        char byte;
        if (ready > 0 && read(feed[0], &byte, 1) < 0 && errno == EINTR) count(&eintr_pipe);
    }
    return NULL;
}

static void *feeder(void *unused) {
    (void)unused;
    for (const double end = end_time(); clock_seconds(CLOCK_MONOTONIC) < end;) {
        struct timespec pause = {0, 1000 * 1000};
        while (nanosleep(&pause, &pause) != 0) {}
        if (write(feed[1], "x", 1) != 1) break;
    }
    return NULL;
}

/* Waits 2 ms at a time on a condition variable nobody signals: any return but ETIMEDOUT is spurious. */
static void *cond_waiter(void *unused) {
    (void)unused;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t never = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&lock);
    for (const double end = end_time(); clock_seconds(CLOCK_MONOTONIC) < end; count(&sleeps)) {
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 2 * 1000 * 1000;
        if (deadline.tv_nsec >= 1000000000) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000; }
        if (pthread_cond_timedwait(&never, &lock, &deadline) != ETIMEDOUT) count(&spurious_cond);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* One sleep() for most of the run, started at once, without retrying: what most callers write. */
static void *long_sleeper(void *unused) {
    (void)unused;
    unsigned left = sleep((unsigned)(seconds * 0.6) > 0 ? (unsigned)(seconds * 0.6) : 1);
    printf("sleep_left %u\n", left);
    return NULL;
}

SAMPLED_FUNCTION uint64_t masked_spin(double duration) { return burn_cpu(duration, 0xA5A5); }
SAMPLED_FUNCTION uint64_t main_spin(double duration) { return burn_cpu(duration, 0x5A5A); }

static void *masked(void *unused) {
    (void)unused;
    sigset_t profiling;
    sigemptyset(&profiling);
    sigaddset(&profiling, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &profiling, NULL);
    sink += masked_spin(seconds * 0.4);
    return NULL;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1.0);
    if (pipe(feed) != 0) return 1;
    void *(*bodies[])(void *) = {nanosleeper, poller, pipe_reader, feeder, cond_waiter, long_sleeper, masked};
    enum { COUNT = sizeof bodies / sizeof bodies[0] };
    pthread_t threads[COUNT];
    /* The masked thread starts with SIGPROF blocked (its attributes' mask), so that no sample
     * can reach it before its own pthread_sigmask: a thread a counter sample reached is sampled
     * at its preemptions' copies from then on, and is no longer one the profiler cannot sample. */
    pthread_attr_t masked_attributes;
    sigset_t profiling;
    sigemptyset(&profiling);
    sigaddset(&profiling, SIGPROF);
    pthread_attr_init(&masked_attributes);
    pthread_attr_setsigmask_np(&masked_attributes, &profiling);
    for (int i = 0; i < COUNT; i++) pthread_create(&threads[i], i == COUNT - 1 ? &masked_attributes : NULL, bodies[i], NULL);
    pthread_attr_destroy(&masked_attributes);
    pthread_setname_np(threads[COUNT - 1], "masked");
    sink += main_spin(seconds * 0.4);
    for (int i = 0; i < COUNT; i++) pthread_join(threads[i], NULL);
    printf("eintr_nanosleep %d\neintr_poll %d\neintr_pipe %d\nspurious_cond %d\nsleeps %d\n", eintr_nanosleep, eintr_poll,
           eintr_pipe, spurious_cond, sleeps);
    return 0;
}
