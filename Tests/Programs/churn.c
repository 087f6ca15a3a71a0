/* churn: argv[1] short-lived threads (default 3000), argv[4] alive at a time (default 50, at
 * most 50), each spending argv[3] microseconds of CPU (default 100) in `churn_fn`. Prints the
 * number of POSIX timers of the process (/proc/self/timers) at start, and again after all
 * threads ended and argv[2] seconds passed: `timers_start N`, `timers_end N`, `threads N`, and
 * the CPU all threads spent inside churn_fn as measured by each on its own clock: `churn_cpu_ns N`.
 * Build: gcc -O2 -pthread -o churn churn.c */
#include "workload.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t sink;
static double burn_seconds = 0.0001;
static _Atomic long long churn_cpu_ns;

static int count_timers(void) {
    FILE *file = fopen("/proc/self/timers", "r");
    if (!file) return -1;
    int count = 0;
    char line[256];
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "ID:", 3) == 0) count++;
    fclose(file);
    return count;
}

SAMPLED_FUNCTION static void churn_fn(void) {
    double start = thread_cpu_seconds();
    sink += burn_cpu(burn_seconds, 0xC0FFEE);
    atomic_fetch_add(&churn_cpu_ns, (long long)((thread_cpu_seconds() - start) * 1e9));
}

static void *short_life(void *unused) {
    (void)unused;
    churn_fn();
    return NULL;
}

int main(int argc, char **argv) {
    const long total = argc > 1 ? atol(argv[1]) : 3000;
    const double settle = argc > 2 ? strtod(argv[2], NULL) : 0.3;
    if (argc > 3) burn_seconds = strtod(argv[3], NULL) * 1e-6;
    const int alive = argc > 4 ? atoi(argv[4]) : 50;
    if (alive < 1 || alive > 50) {
        fprintf(stderr, "churn: %s threads alive at a time: give 1 to 50\n", argv[4]);
        return 2;
    }
    printf("timers_start %d\n", count_timers());
    long created = 0;
    while (created < total) {
        pthread_t batch[50];
        int started = 0;
        for (; started < alive && created < total; started++, created++)
            if (pthread_create(&batch[started], NULL, short_life, NULL) != 0) return 4;
        for (int i = 0; i < started; i++) pthread_join(batch[i], NULL);
    }
    usleep((useconds_t)(settle * 1e6));
    printf("timers_end %d\nthreads %ld\nchurn_cpu_ns %lld\n", count_timers(), created, (long long)churn_cpu_ns);
    return 0;
}
