/* A long-running service for the HTTP endpoint tests: spins in `serve_hot` (not inlined) until
 * the file named by its first argument exists or the second argument's seconds (default 60) pass,
 * then exits with status 3 (its own, so a test can tell it ran to its end). Writes its pid to
 * the file named by its third argument (optional), once it is running. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void serve_hot(void) {
    for (unsigned long i = 0; i < 2000000; i++) sink += i * i;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    const char *stop = argc > 1 ? argv[1] : NULL;
    double seconds = argc > 2 ? atof(argv[2]) : 60;
    if (argc > 3) {
        FILE *pid = fopen(argv[3], "w");
        if (pid) {
            fprintf(pid, "%ld\n", (long)getpid());
            fclose(pid);
        }
    }
    double end = now() + seconds;
    while (now() < end && !(stop && access(stop, F_OK) == 0)) serve_hot();
    puts("service: done");
    return 3;
}
