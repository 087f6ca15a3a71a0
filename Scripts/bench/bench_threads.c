/* bench_threads: eight threads, each doing a fixed amount of CPU work in a function of its own.
 *
 * argv[1] = blocks per thread (see bench_work.h). On a 2-core machine the eight threads share
 * the cores, so the run takes about 4x one thread's work. Prints `threads 8` and a checksum.
 *
 * Build: gcc -O2 -pthread -o bench_threads bench_threads.c */
#include "bench_work.h"
#include <pthread.h>
#include <stdio.h>

#define WORKER_COUNT 8

#define DEFINE_WORKER(n, salt) \
    SAMPLED_FUNCTION uint64_t worker_##n(long blocks) { return burn_blocks(blocks, salt); }

DEFINE_WORKER(0, 0x9E3779B97F4A7C15ULL)
DEFINE_WORKER(1, 0xC2B2AE3D27D4EB4FULL)
DEFINE_WORKER(2, 0x165667B19E3779F9ULL)
DEFINE_WORKER(3, 0x27D4EB2F165667C5ULL)
DEFINE_WORKER(4, 0x85EBCA77C2B2AE63ULL)
DEFINE_WORKER(5, 0xFF51AFD7ED558CCDULL)
DEFINE_WORKER(6, 0xC4CEB9FE1A85EC53ULL)
DEFINE_WORKER(7, 0x94D049BB133111EBULL)

static uint64_t (*const workers[WORKER_COUNT])(long) = {
    worker_0, worker_1, worker_2, worker_3, worker_4, worker_5, worker_6, worker_7,
};

struct job {
    int index;
    long blocks;
    uint64_t result;
};

static void *run_job(void *argument) {
    struct job *job = argument;
    job->result = workers[job->index](job->blocks);
    return NULL;
}

int main(int argc, char **argv) {
    const long blocks = count_argument(argc, argv, 1, 10000);
    pthread_t threads[WORKER_COUNT];
    struct job jobs[WORKER_COUNT];
    for (int i = 0; i < WORKER_COUNT; i++) {
        jobs[i] = (struct job){.index = i, .blocks = blocks};
        if (pthread_create(&threads[i], NULL, run_job, &jobs[i]) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    uint64_t checksum = 0;
    for (int i = 0; i < WORKER_COUNT; i++) {
        pthread_join(threads[i], NULL);
        checksum ^= jobs[i].result;
    }
    printf("threads %d\nchecksum %016llx\n", WORKER_COUNT, (unsigned long long)checksum);
    return 0;
}
