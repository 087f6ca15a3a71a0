/* A long-running service for the daemon's tests: prints "ready pid=N", then serves "requests"
 * for argv[1] seconds (default 60): CPU in service_hot (about 80 %) and service_cold. */
#include <stdio.h>
#include <unistd.h>

#include "workload.h"

static volatile uint64_t sink;

SAMPLED_FUNCTION static uint64_t service_hot(void) { return burn_cpu(0.008, 11); }
SAMPLED_FUNCTION static uint64_t service_cold(void) { return burn_cpu(0.002, 13); }

int main(int argc, char **argv) {
    double seconds = seconds_argument(argc, argv, 60);
    printf("ready pid=%d\n", (int)getpid());
    fflush(stdout);
    double end = clock_seconds(CLOCK_MONOTONIC) + seconds;
    while (clock_seconds(CLOCK_MONOTONIC) < end) sink += service_hot() + service_cold();
    return 0;
}
