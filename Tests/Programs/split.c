/* split: ground truth for CPU attribution.
 *
 * Does CPU work in three functions in the ratio 50/30/20, interleaved in short rounds, and
 * measures the thread CPU time actually spent inside each. Prints one line per function,
 * `measured NAME SHARE`, SHARE being the function's fraction of the time spent in the three
 * (the shares sum to 1), then a checksum.
 *
 * The work (workload.h, work_argument): argv[1] seconds of its own CPU time (default 5), for
 * the tests; or `--blocks N`, N blocks in all, a fixed amount of work, for the benchmarks
 * (the run time under a profiler, divided by the run time without, is its slowdown).
 *
 * Round lengths (2-18 ms, or 100-900 blocks: about as long) and the order within a round are
 * pseudo-random, so that no sampling period can alias with the rounds: a fixed 10 ms round
 * sampled every 10 ms of CPU would put every sample at the same phase, in the same function.
 *
 * Build: gcc -O2 -o split split.c   (no frame pointers on purpose) */
#include "workload.h"
#include <stdio.h>

SAMPLED_FUNCTION uint64_t work_fifty(struct work_amount amount) { return burn_work(amount, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t work_thirty(struct work_amount amount) { return burn_work(amount, 0xC2B2AE3D27D4EB4FULL); }
SAMPLED_FUNCTION uint64_t work_twenty(struct work_amount amount) { return burn_work(amount, 0x165667B19E3779F9ULL); }

/* One of the three functions, its intended share in tenths, and the CPU time measured inside it. */
struct work {
    const char *name;
    uint64_t (*run)(struct work_amount amount);
    int tenths;
    double spent;
};

/* The next round's work: 2-18 ms of CPU time, or 100-900 blocks (a multiple of ten, so that the
 * tenths are whole) but no more than `blocks_left`. */
static struct work_amount next_round(struct work_amount total, long blocks_left, uint64_t *state) {
    if (!total.fixed) {
        return (struct work_amount){.seconds = 0.002 + 0.016 * (double)(next_random(state) >> 11) / 9007199254740992.0};
    }
    const long blocks = 10 * (10 + (long)(next_random(state) % 81));
    return (struct work_amount){.fixed = 1, .blocks = blocks < blocks_left ? blocks : blocks_left};
}

int main(int argc, char **argv) {
    const struct work_amount total = work_argument(argc, argv, 5.0);
    struct work works[3] = {
        {"work_fifty", work_fifty, 5, 0},
        {"work_thirty", work_thirty, 3, 0},
        {"work_twenty", work_twenty, 2, 0},
    };
    uint64_t state = 0x853C49E6748FEA9BULL, checksum = 0;
    double spent = 0;
    long blocks_left = total.blocks;
    while (total.fixed ? blocks_left > 0 : spent < total.seconds) {
        const struct work_amount round = next_round(total, blocks_left, &state);
        blocks_left -= round.blocks;
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
            checksum ^= w->run(work_tenths(round, w->tenths));
            const double used = thread_cpu_seconds() - start;
            w->spent += used;
            spent += used;
        }
    }
    for (int i = 0; i < 3; i++) {
        printf("measured %s %.4f\n", works[i].name, works[i].spent / spent);
    }
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
