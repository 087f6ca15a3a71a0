/* unwind_probe: what a bare libunwind stack walk costs in a SIGPROF handler on this machine,
 * with no profiler around it: the floor under StackSampler's handler time.
 *
 * Arms a timer on this thread's CPU clock (period argv[2] us, default 10000: 100 Hz, like
 * StackSampler's cpu mode) and burns CPU for argv[1] seconds (default 1) of thread CPU time at
 * a depth of about 30 frames. Each signal's handler calls unw_backtrace twice and times both:
 * the first walk is what a profiler pays right after the timer interrupt; the second, at once
 * on the same stack, is the same walk with warm caches. Prints `first_us MEDIAN`,
 * `second_us MEDIAN` and `samples N`.
 *
 * Build (from the repository): gcc -O2 -I Scripts/bench -o unwind_probe Scripts/probes/unwind_probe.c -lunwind */
#include "bench_work.h"
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#define MAX_SAMPLES 4096
#define DEPTH 27

static uint64_t first_ns[MAX_SAMPLES], second_ns[MAX_SAMPLES];
static volatile sig_atomic_t taken, finished;

static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_sample(int signo) {
    (void)signo;
    if (finished || taken >= MAX_SAMPLES) return;
    void *frames[64];
    const uint64_t start = monotonic_ns();
    const int first = unw_backtrace(frames, 64);
    const uint64_t middle = monotonic_ns();
    const int second = unw_backtrace(frames, 64);
    const uint64_t end = monotonic_ns();
    if (first <= 0 || second <= 0) return;
    first_ns[taken] = middle - start;
    second_ns[taken] = end - middle;
    taken++;
}

static SAMPLED_FUNCTION uint64_t descend(int depth, double seconds, uint64_t salt) {
    if (depth > 0) return descend(depth - 1, seconds, salt + 1) + 1;
    const double start = thread_cpu_seconds();
    uint64_t sink = salt;
    while (thread_cpu_seconds() - start < seconds) sink ^= burn_blocks(1, sink | 1);
    return sink;
}

static int compare(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    const double seconds = argc > 1 ? strtod(argv[1], NULL) : 1.0;
    const long period_us = count_argument(argc, argv, 2, 10000);
    if (arm_thread_cpu_timer(on_sample, period_us * 1000) != 0) return 1;
    const uint64_t sink = descend(DEPTH, seconds, 1);
    finished = 1; /* the timer goes on firing: later samples would land in the arrays being sorted */
    const int count = taken;
    if (count == 0) { fprintf(stderr, "unwind_probe: no samples\n"); return 1; }
    qsort(first_ns, (size_t)count, sizeof first_ns[0], compare);
    qsort(second_ns, (size_t)count, sizeof second_ns[0], compare);
    printf("first_us %.2f\nsecond_us %.2f\nsamples %d\nsink %llu\n", first_ns[count / 2] / 1000.0,
           second_ns[count / 2] / 1000.0, count, (unsigned long long)(sink & 1));
    return 0;
}
