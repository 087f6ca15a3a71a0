/* bench_sleepers: many threads that sleep and wake on a timer, as a service's pools do, for what
 * wall mode costs per sleeper.
 *
 * argv[1] threads sleep argv[2] ms at a time (nanosleep, doing nothing else) for argv[3]
 * seconds. Prints `threads N` and `sleeps N`.
 *
 * Build: gcc -O2 -pthread -o bench_sleepers bench_sleepers.c */
#include "bench_work.h"
#include <pthread.h>
#include <stdio.h>

static long nap_ms = 50;
static double seconds = 5;
static volatile long sleeps;

SAMPLED_FUNCTION static void *napper(void *unused) {
    (void)unused;
    const struct timespec nap = {nap_ms / 1000, (nap_ms % 1000) * 1000000};
    const double end = clock_seconds(CLOCK_MONOTONIC) + seconds;
    while (clock_seconds(CLOCK_MONOTONIC) < end) {
        nanosleep(&nap, NULL);
        __atomic_add_fetch(&sleeps, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv) {
    const long threads = count_argument(argc, argv, 1, 1000);
    nap_ms = count_argument(argc, argv, 2, 50);
    seconds = (double)count_argument(argc, argv, 3, 5);
    pthread_t *handles = calloc((size_t)threads, sizeof *handles);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    long started = 0;
    while (started < threads && pthread_create(&handles[started], &attributes, napper, NULL) == 0) started++;
    for (long i = 0; i < started; i++) pthread_join(handles[i], NULL);
    printf("threads %ld\nsleeps %ld\n", started, sleeps);
    free(handles);
    return started == threads ? 0 : 1;
}
