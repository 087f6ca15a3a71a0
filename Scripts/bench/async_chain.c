/* The async chain walk alone (`python3 Scripts/bench/bench.py async`): a synthetic chain of 8 contexts, the
 * last one the task's first, whose resume functions are libc's, walked a million times through
 * the engine's index with plain loads (warm caches; the handler meets colder ones). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "stacksampler_engine.h"

static int read_plain(uintptr_t address, uintptr_t *value, void *context) {
    (void)context;
    *value = *(const uintptr_t *)address;
    return 0;
}

static uint64_t now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

int main(void) {
    enum { DEPTH = 8, RUNS = 1000000 };
    ss_module_cache_refresh();
    void *code[DEPTH] = {(void *)printf, (void *)malloc, (void *)free, (void *)puts,
                         (void *)clock_gettime, (void *)qsort, (void *)abs, (void *)exit};
    uintptr_t *contexts[DEPTH];
    for (int i = 0; i < DEPTH; i++) contexts[i] = malloc(64);
    for (int i = 0; i < DEPTH; i++) {
        contexts[i][0] = i + 1 < DEPTH ? (uintptr_t)contexts[i + 1] : 0;
        contexts[i][1] = (uintptr_t)code[i];
    }
    uintptr_t resumes[64];
    int outcome = -1, count = 0;
    uint64_t start = now_ns();
    for (int run = 0; run < RUNS; run++) count = ss_async_chain((uintptr_t)contexts[0], read_plain, NULL, resumes, 64, &outcome);
    printf("chain walk of %d resume functions (outcome %d): %.0f ns (warm caches)\n", count, outcome,
           (double)(now_ns() - start) / RUNS);
    return outcome == SS_ASYNC_COMPLETE ? 0 : 1;
}
