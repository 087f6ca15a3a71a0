/* late_threads: threads started after the profiler has settled into long batches of ticks.
 * The main thread sleeps 1 s, then argv[1] times (default 5): starts a thread that spins 200 ms
 * in `late_spin`, timing itself, joins it and sleeps 300 ms. Prints `late_spin_ms` (the sum of
 * the spins, as each thread measured its own) and `threads`.
 * Build: gcc -O2 -pthread -o late_threads late_threads.c */
#define _GNU_SOURCE
#include "workload.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static double spun_ms;

SAMPLED_FUNCTION static void *late_spin(void *unused) {
    (void)unused;
    double start = clock_seconds(CLOCK_MONOTONIC), now;
    volatile uint64_t sink = 0;
    while ((now = clock_seconds(CLOCK_MONOTONIC)) - start < 0.2) sink += 1;
    spun_ms += (now - start) * 1000;
    return NULL;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 5;
    usleep(1000000);
    for (int i = 0; i < threads; i++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, late_spin, NULL) != 0) return 1;
        pthread_join(thread, NULL);
        usleep(300000);
    }
    printf("late_spin_ms %.3f\nthreads %d\n", spun_ms, threads);
    return 0;
}
