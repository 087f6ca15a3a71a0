/* exit_status: spins briefly (0.2 s of CPU), prints `exit_status N` and exits with status N
 * (argv[1], default 0), through exit() like any normal program end.
 *
 * Build: gcc -O2 -o exit_status exit_status.c */
#include "workload.h"
#include <stdio.h>

/* The brief spin, so a profiler has something to sample before the exit. */
SAMPLED_FUNCTION uint64_t spin_briefly(void) { return burn_cpu(0.2, 0x9E3779B97F4A7C15ULL); }

int main(int argc, char **argv) {
    const int status = argc > 1 ? atoi(argv[1]) : 0;
    const uint64_t checksum = spin_briefly();
    printf("exit_status %d\nchecksum %016llx\n", status, (unsigned long long)checksum);
    exit(status);
}
