/* sleepers: what a wall-mode profiler must not disturb, and what it cannot sample.
 * For argv[1] seconds: one thread sleeps in 20 ms nanosleep calls, one in 20 ms poll
 * calls, counting calls that ended early with EINTR; one thread blocks SIGPROF and
 * spins in `masked_spin`; the main thread spins in `main_spin`. Prints `eintr N`
 * (both sleepers together) and `sleeps N`.
 * Build: gcc -O2 -pthread -o sleepers sleepers.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static double seconds = 1.0;
static volatile int interrupted, sleeps;
static volatile uint64_t sink;

static void *nanosleeper(void *unused) {
    (void)unused;
    const double end = clock_seconds(CLOCK_MONOTONIC) + seconds;
    while (clock_seconds(CLOCK_MONOTONIC) < end) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        if (nanosleep(&pause, NULL) != 0 && errno == EINTR) __atomic_add_fetch(&interrupted, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&sleeps, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void *poller(void *unused) {
    (void)unused;
    const double end = clock_seconds(CLOCK_MONOTONIC) + seconds;
    while (clock_seconds(CLOCK_MONOTONIC) < end) {
        if (poll(NULL, 0, 20) < 0 && errno == EINTR) __atomic_add_fetch(&interrupted, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&sleeps, 1, __ATOMIC_RELAXED);
    }
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
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, nanosleeper, NULL);
    pthread_create(&threads[1], NULL, poller, NULL);
    pthread_create(&threads[2], NULL, masked, NULL);
    pthread_setname_np(threads[2], "masked");
    sink += main_spin(seconds * 0.4);
    for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    printf("eintr %d\nsleeps %d\n", interrupted, sleeps);
    return 0;
}
