/* deep: recursion argv[1] frames deep (default 100000) on a thread with a large stack,
 * spinning at the bottom for argv[2] seconds of CPU. Prints `depth N`.
 * Build: gcc -O2 -pthread -o deep deep.c */
#include "workload.h"
#include <pthread.h>
#include <stdio.h>

static long target_depth = 100000;
static double seconds = 1.0;
static volatile uint64_t sink;

SAMPLED_FUNCTION long descend(long depth) {
    if (depth >= target_depth) {
        sink += burn_cpu(seconds, 0x51ED);
        return depth;
    }
    long reached = descend(depth + 1);
    sink += (uint64_t)depth; /* not a tail call */
    return reached;
}

static void *run(void *unused) {
    (void)unused;
    return (void *)descend(1);
}

int main(int argc, char **argv) {
    if (argc > 1) target_depth = atol(argv[1]);
    if (argc > 2) seconds = strtod(argv[2], NULL);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 512u << 20);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, run, NULL) != 0) return 4;
    void *reached;
    pthread_join(thread, &reached);
    printf("depth %ld\n", (long)reached);
    return 0;
}
