/* invocations: ground truth for reconstructed function calls.
 *
 * Runs argv[1] rounds (default 5) on the main thread. Each round:
 *   run_phases() calls phase_spin_50 (50 ms of CPU), phase_spin_120 (120 ms of CPU) and
 *     phase_sleep_200 (200 ms asleep), all three from that one caller;
 *   recurse(9) calls itself down to recurse(0), which spins 30 ms: ten nested invocations;
 *   call_twice() calls short_spin (20 ms), spins 15 ms itself, then calls short_spin again.
 * Every call is timed with CLOCK_MONOTONIC around it and printed as `call NAME MILLISECONDS`.
 * With argv[2], warm_up() first spins that many seconds of CPU, untimed: a profiler that starts
 * its engine late (under load) has it running by the first timed call.
 *
 * Build: gcc -O2 -o invocations invocations.c   (no frame pointers on purpose) */
#include "workload.h"
#include <errno.h>
#include <stdio.h>

static uint64_t checksum;


SAMPLED_FUNCTION uint64_t phase_spin_50(void) { return burn_cpu(0.050, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t phase_spin_120(void) { return burn_cpu(0.120, 0xC2B2AE3D27D4EB4FULL); }
SAMPLED_FUNCTION uint64_t phase_sleep_200(void) { sleep_ms(200); return 1; }
SAMPLED_FUNCTION uint64_t short_spin(void) { return burn_cpu(0.020, 0x165667B19E3779F9ULL); }

/* Times one call of `function` and prints it. */
#define TIMED(name, call)                                            \
    do {                                                             \
        const double start = now_ms();                               \
        checksum ^= (call);                                          \
        printf("call %s %.3f\n", name, now_ms() - start);            \
    } while (0)

SAMPLED_FUNCTION void run_phases(void) {
    TIMED("phase_spin_50", phase_spin_50());
    TIMED("phase_spin_120", phase_spin_120());
    TIMED("phase_sleep_200", phase_sleep_200());
}

SAMPLED_FUNCTION uint64_t recurse(int depth) {
    if (depth == 0) return burn_cpu(0.030, 0x27D4EB2F165667C5ULL);
    const uint64_t below = recurse(depth - 1);
    return below ^ (below >> depth);  /* work after the call: neither a tail call nor an accumulator loop */
}

SAMPLED_FUNCTION uint64_t warm_up(double seconds) { return burn_cpu(seconds, 0x94D049BB133111EBULL); }

SAMPLED_FUNCTION void call_twice(void) {
    TIMED("short_spin", short_spin());
    checksum ^= burn_cpu(0.015, 0x85EBCA77C2B2AE63ULL);
    TIMED("short_spin", short_spin());
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 5;
    if (argc > 2) checksum ^= warm_up(atof(argv[2]));
    for (int round = 0; round < rounds; round++) {
        TIMED("run_phases", (run_phases(), 0));
        TIMED("recurse", recurse(9));
        TIMED("call_twice", (call_twice(), 0));
    }
    printf("checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
