/* churn: argv[1] short-lived threads (default 3000), 50 alive at a time, each doing a
 * little work. Prints the number of POSIX timers of the process (/proc/self/timers) at
 * start, and again after all threads ended and argv[2] seconds passed: `timers_start N`,
 * `timers_end N`, and `threads N`.
 * Build: gcc -O2 -pthread -o churn churn.c */
#include "workload.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t sink;

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

static void *short_life(void *unused) {
    (void)unused;
    sink += burn_cpu(0.0002, 0xC0FFEE);
    return NULL;
}

int main(int argc, char **argv) {
    const long total = argc > 1 ? atol(argv[1]) : 3000;
    const double settle = argc > 2 ? strtod(argv[2], NULL) : 0.3;
    printf("timers_start %d\n", count_timers());
    long created = 0;
    while (created < total) {
        pthread_t batch[50];
        int started = 0;
        for (; started < 50 && created < total; started++, created++)
            if (pthread_create(&batch[started], NULL, short_life, NULL) != 0) return 4;
        for (int i = 0; i < started; i++) pthread_join(batch[i], NULL);
    }
    usleep((useconds_t)(settle * 1e6));
    printf("timers_end %d\nthreads %ld\n", count_timers(), created);
    return 0;
}
