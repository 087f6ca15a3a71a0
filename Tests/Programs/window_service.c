/*
 * A service for continuous-mode tests: THREADS workers serve requests for SECONDS, each request
 * a call chain of random depth (1 to 12) through two alternating functions per level, ending in
 * `serve_hot`, so that windows see many distinct stacks. Each worker measures the CPU time it
 * spends in serve_hot. The main thread watches its own resident size.
 *
 * Prints: hot_cpu_us N (all workers), rss_kb_start N (after WARMUP seconds, when the first
 * windows are written), rss_kb_max N (largest after that), rss_kb_end N; with SPAN, the
 * largest resident size in each SPAN seconds after WARMUP: rss_kb_peak_1 N, rss_kb_peak_2 N, …
 * (a continuous session holds one window's stacks at a time: compare window with window).
 * Usage: window_service SECONDS THREADS [WARMUP [SPAN]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static double run_seconds;
static double started;
static _Atomic uint64_t hot_cpu_ns;

__attribute__((noinline)) double serve_hot(int rounds) {
    volatile double x = 0;
    for (int i = 0; i < rounds; i++) x += i * 0.5;
    return x;
}

static double serve_left(int depth, uint64_t path);
static double serve_right(int depth, uint64_t path);

/* The timed leaf: CPU of serve_hot alone, measured around it. */
static double timed_hot(void) {
    double before = seconds_now(CLOCK_THREAD_CPUTIME_ID);
    double result = serve_hot(20000);
    atomic_fetch_add(&hot_cpu_ns, (uint64_t)((seconds_now(CLOCK_THREAD_CPUTIME_ID) - before) * 1e9));
    return result;
}

__attribute__((noinline)) static double serve_left(int depth, uint64_t path) {
    if (depth == 0) return timed_hot();
    double result = (path & 1) ? serve_right(depth - 1, path >> 1) : serve_left(depth - 1, path >> 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
    return result + 1;
}

__attribute__((noinline)) static double serve_right(int depth, uint64_t path) {
    if (depth == 0) return timed_hot();
    double result = (path & 1) ? serve_left(depth - 1, path >> 1) : serve_right(depth - 1, path >> 1);
    __asm__ volatile("" ::: "memory");
    return result + 2;
}

static void *worker(void *argument) {
    uint64_t state = (uint64_t)(uintptr_t)argument * 0x9E3779B97F4A7C15ull + 1;
    double sink = 0;
    while (seconds_now(CLOCK_MONOTONIC) - started < run_seconds) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        sink += serve_left(1 + (int)(state % 12), state >> 8);
        if ((state & 7) == 0) {
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
        }
    }
    return (void *)(uintptr_t)(sink > 0);
}

static long resident_kb(void) {
    FILE *status = fopen("/proc/self/status", "r");
    if (!status) return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, status))
        if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    fclose(status);
    return kb;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: window_service SECONDS THREADS [WARMUP]\n");
        return 2;
    }
    run_seconds = atof(argv[1]);
    int count = atoi(argv[2]);
    double warmup = argc > 3 ? atof(argv[3]) : 1;
    double span = argc > 4 ? atof(argv[4]) : 0;
    long peaks[64] = {0};
    int spans = 0;
    started = seconds_now(CLOCK_MONOTONIC);
    pthread_t threads[64];
    if (count < 1 || count > 64) return 2;
    for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    long rss_start = -1, rss_max = -1;
    while (seconds_now(CLOCK_MONOTONIC) - started < run_seconds) {
        struct timespec pause = {0, 100000000};
        nanosleep(&pause, NULL);
        if (seconds_now(CLOCK_MONOTONIC) - started < warmup) continue;
        long kb = resident_kb();
        if (rss_start < 0) rss_start = kb;
        if (kb > rss_max) rss_max = kb;
        if (span > 0) {
            int index = (int)((seconds_now(CLOCK_MONOTONIC) - started - warmup) / span);
            if (index >= 0 && index < 64) {
                if (kb > peaks[index]) peaks[index] = kb;
                if (index + 1 > spans) spans = index + 1;
            }
        }
    }
    for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
    printf("hot_cpu_us %llu\nrss_kb_start %ld\nrss_kb_max %ld\nrss_kb_end %ld\n",
           (unsigned long long)(atomic_load(&hot_cpu_ns) / 1000), rss_start, rss_max, resident_kb());
    for (int i = 0; i < spans; i++) printf("rss_kb_peak_%d %ld\n", i + 1, peaks[i]);
    return 0;
}
