/* main_exits_first: the main thread ends by pthread_exit, and the process ends when its last
 * thread does (the C library then calls exit(0)).
 * `workers-last` (the default): the main thread starts three workers and calls pthread_exit at
 * once; each worker spins about 0.2 s of CPU in `worker_spin`, then sleeps 0.2 s in
 * `worker_nap` and returns. `main-last`: the main thread starts them, joins them, then calls
 * pthread_exit itself. `pool`: the main thread starts the three workers and a manager, which
 * starts four short helpers (`pool_helper`, 50 ms asleep) and joins them, then calls
 * pthread_exit at once; the workers end last (the process must not end before they do).
 * Prints `workers N` as the last worker ends.
 * Build: gcc -O2 -pthread -o main_exits_first main_exits_first.c */
#include "workload.h"
#include <pthread.h>
#include <string.h>

enum { WORKERS = 3 };
static int ended;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

SAMPLED_FUNCTION static uint64_t worker_spin(void) { return burn_cpu(0.2, 0x2545F4914F6CDD1DULL); }

SAMPLED_FUNCTION static void worker_nap(void) { sleep_ms(200); }

static void *worker(void *unused) {
    (void)unused;
    volatile uint64_t checksum = worker_spin();
    (void)checksum;
    worker_nap();
    pthread_mutex_lock(&lock);
    if (++ended == WORKERS) {
        printf("workers %d\n", ended);
        fflush(stdout);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

SAMPLED_FUNCTION static void *pool_helper(void *unused) {
    (void)unused;
    sleep_ms(50);
    return NULL;
}

static void *pool_manager(void *unused) {
    (void)unused;
    pthread_t helpers[4];
    for (int i = 0; i < 4; i++) pthread_create(&helpers[i], NULL, pool_helper, NULL);
    for (int i = 0; i < 4; i++) pthread_join(helpers[i], NULL);
    return NULL;
}

int main(int argc, char **argv) {
    const int mainLast = argc > 1 && strcmp(argv[1], "main-last") == 0;
    pthread_t threads[WORKERS];
    for (int i = 0; i < WORKERS; i++) pthread_create(&threads[i], NULL, worker, NULL);
    if (argc > 1 && strcmp(argv[1], "pool") == 0) {
        pthread_t manager;
        pthread_create(&manager, NULL, pool_manager, NULL);
    }
    if (mainLast) {
        for (int i = 0; i < WORKERS; i++) pthread_join(threads[i], NULL);
    }
    pthread_exit(NULL);
}
