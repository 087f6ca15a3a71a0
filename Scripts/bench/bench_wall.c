/* bench_wall: busy threads doing fixed work, and sleeping threads, for wall mode's cost.
 *
 * argv[1] = busy threads, argv[2] = blocks of work each (see bench_work.h), argv[3] = sleeping
 * threads, which wait on a condition variable until every busy thread is done. Prints
 * `threads N` and a checksum.
 *
 * Build: gcc -O2 -pthread -o bench_wall bench_wall.c */
#include "bench_work.h"
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_changed = PTHREAD_COND_INITIALIZER;
static int done;

SAMPLED_FUNCTION static void *busy_worker(void *blocks) {
    uint64_t result = burn_blocks(*(long *)blocks, 0x9E3779B97F4A7C15ULL);
    return (void *)(uintptr_t)result;
}

SAMPLED_FUNCTION static void *sleeper(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&done_changed, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    long busy = count_argument(argc, argv, 1, 1), blocks = count_argument(argc, argv, 2, 1000),
         sleeping = count_argument(argc, argv, 3, 0);
    pthread_t *threads = calloc((size_t)(busy + sleeping), sizeof *threads);
    if (!threads) return 1;
    for (long i = 0; i < sleeping; i++) pthread_create(&threads[busy + i], NULL, sleeper, NULL);
    for (long i = 0; i < busy; i++) pthread_create(&threads[i], NULL, busy_worker, &blocks);
    uint64_t checksum = 0;
    for (long i = 0; i < busy; i++) {
        void *result;
        pthread_join(threads[i], &result);
        checksum ^= (uint64_t)(uintptr_t)result;
    }
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&done_changed);
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < sleeping; i++) pthread_join(threads[busy + i], NULL);
    printf("threads %ld\nchecksum %016llx\n", busy + sleeping, (unsigned long long)checksum);
    free(threads);
    return 0;
}
