/* threads: eight named threads, each spinning in a function of its own.
 *
 * Thread N names itself `worker-N` (pthread_setname_np) before it does anything else, then
 * works in `worker_N`: argv[1] seconds of its own CPU time (default 1), for the tests; or, with
 * `--blocks N`, N blocks of arithmetic, a fixed amount of work, for the benchmarks (see
 * workload.h, work_argument). The eight worker functions differ in a constant, so the linker
 * cannot fold them into one. Prints `threads 8` once all have finished, then a checksum.
 *
 * Build: gcc -O2 -pthread -o threads threads.c */
#include "workload.h"
#include <pthread.h>
#include <stdio.h>

#define WORKER_COUNT 8

/* Defines worker_N, whose work differs from its siblings' by `salt`. */
#define DEFINE_WORKER(n, salt) \
    SAMPLED_FUNCTION uint64_t worker_##n(struct work_amount amount) { return burn_work(amount, salt); }

DEFINE_WORKER(0, 0x9E3779B97F4A7C15ULL)
DEFINE_WORKER(1, 0xC2B2AE3D27D4EB4FULL)
DEFINE_WORKER(2, 0x165667B19E3779F9ULL)
DEFINE_WORKER(3, 0x27D4EB2F165667C5ULL)
DEFINE_WORKER(4, 0x85EBCA77C2B2AE63ULL)
DEFINE_WORKER(5, 0xFF51AFD7ED558CCDULL)
DEFINE_WORKER(6, 0xC4CEB9FE1A85EC53ULL)
DEFINE_WORKER(7, 0x94D049BB133111EBULL)

static uint64_t (*const workers[WORKER_COUNT])(struct work_amount) = {
    worker_0, worker_1, worker_2, worker_3, worker_4, worker_5, worker_6, worker_7,
};

/* What one thread is told to do, and where it leaves its result. */
struct job {
    int index;
    struct work_amount amount;
    uint64_t result;
};

/* Thread entry: take the name `worker-N` first, then spin in worker_N. */
static void *run_job(void *argument) {
    struct job *job = argument;
    char name[16];
    snprintf(name, sizeof name, "worker-%d", job->index);
    pthread_setname_np(pthread_self(), name);
    job->result = workers[job->index](job->amount);
    return NULL;
}

int main(int argc, char **argv) {
    const struct work_amount amount = work_argument(argc, argv, 1.0);
    pthread_t threads[WORKER_COUNT];
    struct job jobs[WORKER_COUNT];
    for (int i = 0; i < WORKER_COUNT; i++) {
        jobs[i] = (struct job){.index = i, .amount = amount};
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
