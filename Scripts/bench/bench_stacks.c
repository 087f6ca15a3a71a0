/*
 * Many distinct stacks: THREADS threads (argv[2], default 4) for argv[1] seconds (default 10)
 * each recurse through 8 functions, chosen at every level by a per-thread random draw, to a
 * depth of 7, and burn about 50 us at the leaf. Almost every sample has a stack no sample
 * had before (8^7 paths per thread): the worst case for the sampler's aggregation, which
 * `python3 Scripts/bench/bench.py sampler` measures (the sampler thread's CPU per sample).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { DEPTH = 7, FUNCTIONS = 8 };

static double seconds = 10;
static volatile uint64_t sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static uint64_t leaf(uint64_t *state) {
    uint64_t value = *state;
    for (int i = 0; i < 20000; i++) value = value * 6364136223846793005ull + 1442695040888963407ull;
    return value;
}

static uint64_t descend(int depth, uint64_t *state);

/* Eight functions that differ only in name: each calls on, then uses the result (no tail call). */
#define LEVEL(name, salt)                                                   \
    __attribute__((noinline)) static uint64_t name(int depth, uint64_t *state) { \
        uint64_t value = descend(depth + 1, state);                         \
        sink += value;                                                      \
        return value ^ salt;                                                \
    }
LEVEL(level_a, 1) LEVEL(level_b, 2) LEVEL(level_c, 3) LEVEL(level_d, 4)
LEVEL(level_e, 5) LEVEL(level_f, 6) LEVEL(level_g, 7) LEVEL(level_h, 8)

static uint64_t (*const levels[FUNCTIONS])(int, uint64_t *) = {level_a, level_b, level_c, level_d,
                                                               level_e, level_f, level_g, level_h};

__attribute__((noinline)) static uint64_t descend(int depth, uint64_t *state) {
    if (depth == DEPTH) return leaf(state);
    uint64_t value = levels[next(state) % FUNCTIONS](depth, state);
    sink += value;
    return value;
}

static void *worker(void *seed) {
    uint64_t state = (uint64_t)(uintptr_t)seed * 0x9E3779B97F4A7C15ull | 1;
    double end = now() + seconds;
    while (now() < end) sink += descend(0, &state);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) seconds = atof(argv[1]);
    int threads = argc > 2 ? atoi(argv[2]) : 4;
    pthread_t handles[64];
    if (threads < 1 || threads > 64) return 2;
    for (int i = 0; i < threads; i++) pthread_create(&handles[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < threads; i++) pthread_join(handles[i], NULL);
    printf("done %llu\n", (unsigned long long)sink);
    return 0;
}
