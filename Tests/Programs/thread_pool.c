/* thread_pool: a pool of THREADS threads (argv[2], default 48) that wait for argv[1] seconds,
 * each in turns of a 30 ms sleep in `pool_wait_long` and a 10 ms sleep in `pool_wait_short`
 * (so 3:1), as the idle threads of a service's pool wait on timers. Each thread times its own
 * sleeps in each function on the monotonic clock; prints `long_ms L`, `short_ms S`, `eintr N`
 * (sleeps cut short by a signal) and `threads T` once every thread has joined.
 * Build: gcc -O2 -pthread -o thread_pool thread_pool.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <pthread.h>

static double seconds = 2.0;
static double long_ms, short_ms;
static int eintr;
static pthread_mutex_t totals = PTHREAD_MUTEX_INITIALIZER;

/* Sleeps `milliseconds` in one nanosleep; returns the milliseconds it lasted and counts an EINTR. */
SAMPLED_FUNCTION static double timed_sleep(long milliseconds, int *interrupted) {
    double start = now_ms();
    struct timespec pause = {0, milliseconds * 1000 * 1000};
    if (nanosleep(&pause, NULL) != 0 && errno == EINTR) (*interrupted)++;
    return now_ms() - start;
}

/* Each keeps its frame over the sleep: the empty asm after the call is no tail call's. */
SAMPLED_FUNCTION static double pool_wait_long(int *interrupted) {
    double lasted = timed_sleep(30, interrupted);
    __asm__ volatile("" ::: "memory");
    return lasted;
}

SAMPLED_FUNCTION static double pool_wait_short(int *interrupted) {
    double lasted = timed_sleep(10, interrupted);
    __asm__ volatile("" ::: "memory");
    return lasted;
}

static void *pool_thread(void *unused) {
    (void)unused;
    double in_long = 0, in_short = 0;
    int interrupted = 0;
    for (const double end = now_ms() + seconds * 1e3; now_ms() < end;) {
        in_long += pool_wait_long(&interrupted);
        in_short += pool_wait_short(&interrupted);
    }
    pthread_mutex_lock(&totals);
    long_ms += in_long;
    short_ms += in_short;
    eintr += interrupted;
    pthread_mutex_unlock(&totals);
    return NULL;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, seconds);
    int count = argc > 2 ? atoi(argv[2]) : 48;
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, pool_thread, NULL);
    for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
    printf("long_ms %.1f\nshort_ms %.1f\neintr %d\nthreads %d\n", long_ms, short_ms, eintr, count);
    return 0;
}
