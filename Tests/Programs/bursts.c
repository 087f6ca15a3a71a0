/* bursts: what wall mode must neither disturb nor lose on a busy machine.
 * For argv[1] seconds (default 1): three threads each burn about 100 us of CPU, then block
 * 1 ms in poll (`poll_burster`), select (`select_burster`) or epoll_wait (`epoll_burster`),
 * counting the calls that return EINTR; a thread started 100 ms in sleeps 200 ms, then spins
 * for half the run in `busy_life`, which times itself. Prints `eintr_poll`, `eintr_select`, `eintr_epoll`,
 * `bursts` (blocking calls made) and `busy_life_ms`.
 * Build: gcc -O2 -pthread -o bursts bursts.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

static double seconds = 1.0;
static volatile int bursts, eintr_poll, eintr_select, eintr_epoll;
static volatile uint64_t sink;
static double busy_life_ms;

static void count(volatile int *counter) { __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED); }

/* About 100 us of CPU time. */
static void burst(void) { sink ^= burn_cpu(0.0001, 0x9E3779B97F4A7C15ULL); }

SAMPLED_FUNCTION static void *poll_burster(void *unused) {
    (void)unused;
    for (const double end = clock_seconds(CLOCK_MONOTONIC) + seconds; clock_seconds(CLOCK_MONOTONIC) < end; count(&bursts)) {
        burst();
        if (poll(NULL, 0, 1) < 0 && errno == EINTR) count(&eintr_poll);
    }
    return NULL;
}

SAMPLED_FUNCTION static void *select_burster(void *unused) {
    (void)unused;
    for (const double end = clock_seconds(CLOCK_MONOTONIC) + seconds; clock_seconds(CLOCK_MONOTONIC) < end; count(&bursts)) {
        burst();
        struct timeval timeout = {0, 1000};
        if (select(0, NULL, NULL, NULL, &timeout) < 0 && errno == EINTR) count(&eintr_select);
    }
    return NULL;
}

SAMPLED_FUNCTION static void *epoll_burster(void *unused) {
    (void)unused;
    int poller = epoll_create1(EPOLL_CLOEXEC);
    for (const double end = clock_seconds(CLOCK_MONOTONIC) + seconds; clock_seconds(CLOCK_MONOTONIC) < end; count(&bursts)) {
        burst();
        struct epoll_event event;
        if (epoll_wait(poller, &event, 1, 1) < 0 && errno == EINTR) count(&eintr_epoll);
    }
    close(poller);
    return NULL;
}

/* Spins for half the run, timing itself from its first instruction to its last. */
SAMPLED_FUNCTION static void busy_life(void) {
    const double start = clock_seconds(CLOCK_MONOTONIC);
    while (clock_seconds(CLOCK_MONOTONIC) < start + seconds / 2) sink += sink * 31 + 7;
    busy_life_ms = (clock_seconds(CLOCK_MONOTONIC) - start) * 1e3;
}

/* Sleeps 200 ms first: a thread a profiler has seen before it starts its timed life. */
static void *busy_thread(void *unused) {
    (void)unused;
    struct timespec pause = {0, 200 * 1000 * 1000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
    busy_life();
    return NULL;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1.0);
    void *(*const bodies[])(void *) = {poll_burster, select_burster, epoll_burster};
    pthread_t threads[4];
    for (int i = 0; i < 3; i++) pthread_create(&threads[i], NULL, bodies[i], NULL);
    struct timespec pause = {0, 100 * 1000 * 1000};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {}
    pthread_create(&threads[3], NULL, busy_thread, NULL);
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    printf("eintr_poll %d\neintr_select %d\neintr_epoll %d\nbursts %d\nbusy_life_ms %.3f\n", eintr_poll, eintr_select,
           eintr_epoll, bursts, busy_life_ms);
    return 0;
}
