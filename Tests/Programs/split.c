/* split: ground truth for CPU attribution.
 *
 * Spends argv[1] seconds (default 5) of its own CPU time in three functions in the ratio
 * 50/30/20, interleaved in short rounds, and measures the thread CPU time actually spent
 * inside each. Prints one line per function, `measured NAME SHARE`, SHARE being the
 * function's fraction of the time spent in the three (the shares sum to 1).
 *
 * Round lengths (2-18 ms) and the order within a round are pseudo-random, so that no
 * sampling period can alias with the rounds: a fixed 10 ms round sampled every 10 ms of
 * CPU would put every sample at the same phase, in the same function.
 *
 * Build: gcc -O2 -o split split.c   (no frame pointers on purpose) */
#include "workload.h"
#include <stdio.h>

SAMPLED_FUNCTION uint64_t work_fifty(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t work_thirty(double seconds) { return burn_cpu(seconds, 0xC2B2AE3D27D4EB4FULL); }
SAMPLED_FUNCTION uint64_t work_twenty(double seconds) { return burn_cpu(seconds, 0x165667B19E3779F9ULL); }

/* One of the three functions, its intended share, and the CPU time measured inside it. */
struct work {
    const char *name;
    uint64_t (*run)(double seconds);
    double weight;
    double spent;
};

/* A small deterministic generator (xorshift64*) for round lengths and orders. */
static uint64_t next_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

int main(int argc, char **argv) {
    const double duration = seconds_argument(argc, argv, 5.0);
    struct work works[3] = {
        {"work_fifty", work_fifty, 0.5, 0},
        {"work_thirty", work_thirty, 0.3, 0},
        {"work_twenty", work_twenty, 0.2, 0},
    };
    uint64_t state = 0x853C49E6748FEA9BULL, checksum = 0;
    double total = 0;
    while (total < duration) {
        const double round = 0.002 + 0.016 * (double)(next_random(&state) >> 11) / 9007199254740992.0;
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
            checksum ^= w->run(round * w->weight);
            const double spent = thread_cpu_seconds() - start;
            w->spent += spent;
            total += spent;
        }
    }
    for (int i = 0; i < 3; i++) {
        printf("measured %s %.4f\n", works[i].name, works[i].spent / total);
    }
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
