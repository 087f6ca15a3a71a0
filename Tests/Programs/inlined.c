/* inlined: CPU time in code the compiler inlined.
 *
 * Spends argv[1] seconds (default 1) of CPU time in hot_function, all of it in the code of
 * inner_helper, a static always_inline function inlined into it, which in turn inlines
 * burn_cpu. With DWARF the profiler can show hot_function;inner_helper_[i];burn_cpu_[i].
 *
 * Build: gcc -O2 -g -o inlined inlined.c */
#include "workload.h"
#include <stdio.h>

static inline __attribute__((always_inline)) uint64_t inner_helper(double seconds) {
    return burn_cpu(seconds, 0x2545F4914F6CDD1DULL);
}

static SAMPLED_FUNCTION uint64_t hot_function(double seconds) { return inner_helper(seconds); }

int main(int argc, char **argv) {
    printf("checksum %llx\n", (unsigned long long)hot_function(seconds_argument(argc, argv, 1.0)));
    return 0;
}
