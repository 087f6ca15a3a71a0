/* walk_probe: what the engine's own stack walk costs, outside any handler: 200 walks of a
 * 31-frame stack through ss_unwind_caller_stack with warm caches, then 200 more each after
 * 64 MB of other memory traffic (the cold caches a handler meets at 100 Hz on a busy host).
 * Prints `warm`/`cold` lines with the frame count, the walk's outcome (0: complete), and the
 * median and 90th percentile.
 *
 * Build (from the repository): gcc -O2 -o walk_probe Scripts/probes/walk_probe.c -L .build/release -lStackSamplerPreload \
 *            -Wl,-rpath,$PWD/.build/release */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*ss_memory_reader)(uintptr_t address, uintptr_t *value, void *context);
int ss_unwind_caller_stack(ss_memory_reader read, void *context, uintptr_t *frames, int capacity, int *outcome);
void ss_module_cache_refresh(void);

enum { WALKS = 200, DEPTH = 26, TRAFFIC_BYTES = 64 << 20 };

static char *traffic;

static int read_directly(uintptr_t address, uintptr_t *value, void *context) {
    (void)context;
    *value = *(const uintptr_t *)address;
    return 0;
}

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

__attribute__((noinline)) static int measure(int depth, int cold) {
    if (depth > 0) {
        int result = measure(depth - 1, cold);
        __asm__ volatile("" ::: "memory"); /* not a tail call: one frame per level */
        return result + 1;
    }
    uintptr_t frames[64];
    double seconds[WALKS];
    int outcome = -1, count = 0;
    for (int i = 0; i < WALKS; i++) {
        if (cold) memset(traffic, i, TRAFFIC_BYTES);
        double start = now_seconds();
        count = ss_unwind_caller_stack(read_directly, NULL, frames, 64, &outcome);
        seconds[i] = now_seconds() - start;
    }
    qsort(seconds, WALKS, sizeof seconds[0], by_value);
    printf("%s: %d frames, outcome %d, median %.2f us, p90 %.2f us\n", cold ? "cold" : "warm", count, outcome,
           seconds[WALKS / 2] * 1e6, seconds[WALKS * 9 / 10] * 1e6);
    return 0;
}

int main(void) {
    traffic = malloc(TRAFFIC_BYTES);
    if (!traffic) return 1;
    ss_module_cache_refresh();
    measure(DEPTH, 0);
    measure(DEPTH, 1);
    return 0;
}
