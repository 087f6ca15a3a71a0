/* bench_split: fixed CPU work split 50/30/20 between three functions, with ground truth.
 *
 * argv[1] = total work in blocks (see bench_work.h). The work is done in rounds of 100-900
 * blocks (pseudo-random, so no sampling period aliases with them), each round split 50/30/20
 * between work_fifty, work_thirty and work_twenty in a pseudo-random order. The program
 * measures the thread CPU time actually spent inside each function and prints
 * `measured NAME SHARE` (shares of the time in the three; they sum to 1): the ground truth
 * a profiler's attribution is compared against. The amount of work is fixed, so the run
 * time under a profiler, divided by the run time without, is the profiler's slowdown.
 *
 * Build: gcc -O2 -o bench_split bench_split.c   (no frame pointers, like most of Debian) */
#include "bench_work.h"
#include <stdio.h>

SAMPLED_FUNCTION uint64_t work_fifty(long blocks) { return burn_blocks(blocks, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t work_thirty(long blocks) { return burn_blocks(blocks, 0xC2B2AE3D27D4EB4FULL); }
SAMPLED_FUNCTION uint64_t work_twenty(long blocks) { return burn_blocks(blocks, 0x165667B19E3779F9ULL); }

struct work {
    const char *name;
    uint64_t (*run)(long blocks);
    long weight; /* tenths */
    double spent;
};

int main(int argc, char **argv) {
    long remaining = count_argument(argc, argv, 1, 50000);
    struct work works[3] = {
        {"work_fifty", work_fifty, 5, 0},
        {"work_thirty", work_thirty, 3, 0},
        {"work_twenty", work_twenty, 2, 0},
    };
    uint64_t state = 0x853C49E6748FEA9BULL, checksum = 0;
    double total = 0;
    while (remaining > 0) {
        long round = 10 * (10 + (long)(next_random(&state) % 81)); /* 100..900 blocks */
        if (round > remaining) round = remaining;
        remaining -= round;
        int order[3] = {0, 1, 2};
        for (int i = 2; i > 0; i--) {
            const int j = (int)(next_random(&state) % (uint64_t)(i + 1));
            const int swap = order[i];
            order[i] = order[j];
            order[j] = swap;
        }
        for (int i = 0; i < 3; i++) {
            struct work *w = &works[order[i]];
            const double start = thread_cpu_seconds();
            checksum ^= w->run(round * w->weight / 10);
            const double spent = thread_cpu_seconds() - start;
            w->spent += spent;
            total += spent;
        }
    }
    for (int i = 0; i < 3; i++) printf("measured %s %.4f\n", works[i].name, works[i].spent / total);
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
