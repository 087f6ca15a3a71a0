/* Samples itself through the C API (linked against libStackSamplerPreload.so) in wall mode at
 * 1 ms and execs while the session runs: `c_api_exec N` starts a session, burns ~20 ms, then
 * execs itself with N-1; at 0 it exits 0. A profiler signal that outlives an image kills the
 * next one (SIGPROF, status 155 in a shell). */
#include <stacksampler.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int remaining = argc > 1 ? atoi(argv[1]) : 0;
    if (remaining <= 0) return 0;
    int status = stacksampler_start(1000000, STACKSAMPLER_MODE_WALL);
    if (status != STACKSAMPLER_OK) {
        fprintf(stderr, "stacksampler_start: %d\n", status);
        return 1;
    }
    for (double end = cpu_seconds() + 0.02; cpu_seconds() < end;)
        for (int i = 0; i < 10000; i++) sink += i * sink;
    char next[16];
    snprintf(next, sizeof next, "%d", remaining - 1);
    execv(argv[0], (char *[]){argv[0], next, NULL});
    perror("execv");
    return 1;
}
