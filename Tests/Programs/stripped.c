/* stripped: CPU time in three static functions of a program that is shipped stripped.
 *
 * Spends argv[1] seconds (default 2) of CPU time in hot_one, hot_two and hot_three, 50/30/20,
 * in interleaved 5 ms rounds. The functions are static, so once the program is stripped no
 * symbol table names them: only the unwind data (.eh_frame) bounds them.
 *
 * Build: gcc -O2 -o stripped.unstripped stripped.c && strip -o stripped stripped.unstripped */
#include "workload.h"
#include <stdio.h>

static SAMPLED_FUNCTION uint64_t hot_one(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }
static SAMPLED_FUNCTION uint64_t hot_two(double seconds) { return burn_cpu(seconds, 0xC2B2AE3D27D4EB4FULL); }
static SAMPLED_FUNCTION uint64_t hot_three(double seconds) { return burn_cpu(seconds, 0x165667B19E3779F9ULL); }

int main(int argc, char **argv) {
    const double duration = seconds_argument(argc, argv, 2.0);
    const double start = thread_cpu_seconds();
    uint64_t checksum = 0;
    while (thread_cpu_seconds() - start < duration) {
        checksum ^= hot_one(0.0025);
        checksum ^= hot_two(0.0015);
        checksum ^= hot_three(0.0010);
    }
    printf("checksum %llx\n", (unsigned long long)checksum);
    return 0;
}
