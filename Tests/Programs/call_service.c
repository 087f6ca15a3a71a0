/* call_service: ground truth for the calls of a continuous session.
 *
 * Two workers serve requests for SECONDS (argv[1], default 10). A request, `handle_request`,
 * calls `query_database` (asleep 25-75 ms) then `render_page` (25-75 ms of CPU, one worker at a
 * time: the other waits, blocked); the lengths
 * come from a fixed seed per worker. Worker 0 also makes one `long_call` (asleep LONG_MS,
 * argv[2], default 1600 ms) once 2.3 s have passed, outside any request: it spans a window
 * boundary of 1 s windows. Between requests a worker waits 25 ms in `wait_for_request`. Every call is timed with CLOCK_MONOTONIC around it and printed as
 * `call NAME MILLISECONDS END_UNIX_NS TID` (its end on CLOCK_REALTIME, to place it in a window).
 *
 * Build: gcc -O2 -pthread -o call_service call_service.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static double run_seconds;
static double long_ms;
static double started;
static pthread_mutex_t output = PTHREAD_MUTEX_INITIALIZER;


static void print_call(const char *name, double start_ms) {
    const double milliseconds = now_ms() - start_ms;
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    pthread_mutex_lock(&output);
    printf("call %s %.3f %lld %d\n", name, milliseconds, (long long)end.tv_sec * 1000000000LL + end.tv_nsec, gettid());
    pthread_mutex_unlock(&output);
}

/* Times one call and prints it. */
#define TIMED(name, call)              \
    do {                               \
        const double start = now_ms(); \
        call;                          \
        print_call(name, start);       \
    } while (0)

static uint64_t sink;

/* The empty asm after each call keeps it from being a tail call: the function's frame stays. */
SAMPLED_FUNCTION void query_database(double milliseconds) {
    sleep_ms(milliseconds);
    __asm__ volatile("" ::: "memory");
}
/* One renderer at a time (a worker waits for the other's render, blocked): the program keeps at
 * most one core busy, so that on a 2-core machine its threads never wait for a core. */
static pthread_mutex_t renderer = PTHREAD_MUTEX_INITIALIZER;
SAMPLED_FUNCTION uint64_t render_page(double milliseconds) {
    pthread_mutex_lock(&renderer);
    const uint64_t result = burn_cpu(milliseconds / 1e3, 0x9E3779B97F4A7C15ULL);
    pthread_mutex_unlock(&renderer);
    return result;
}
SAMPLED_FUNCTION void long_call(void) {
    sleep_ms(long_ms);
    __asm__ volatile("" ::: "memory");
}
/* Between two requests a service waits for the next: 25 ms here, so that a sample (every 10 ms
 * at most) always falls between two calls of handle_request from the same call site, which
 * would otherwise look like one call. */
SAMPLED_FUNCTION void wait_for_request(void) {
    sleep_ms(25);
    __asm__ volatile("" ::: "memory");
}

SAMPLED_FUNCTION void handle_request(unsigned *seed) {
    const double query = 25 + rand_r(seed) % 51, render = 25 + rand_r(seed) % 51;
    TIMED("query_database", query_database(query));
    TIMED("render_page", sink ^= render_page(render));
}

static void *worker(void *argument) {
    const int index = (int)(intptr_t)argument;
    unsigned seed = 12345u + (unsigned)index;
    int long_done = index != 0;
    while (now_ms() - started < run_seconds * 1e3) {
        if (!long_done && now_ms() - started >= 2300) {
            TIMED("long_call", long_call());
            long_done = 1;
        }
        TIMED("handle_request", handle_request(&seed));
        wait_for_request();
    }
    return NULL;
}

int main(int argc, char **argv) {
    run_seconds = seconds_argument(argc, argv, 10);
    long_ms = argc > 2 ? strtod(argv[2], NULL) : 1600;
    started = now_ms();
    pthread_t threads[2];
    for (intptr_t i = 0; i < 2; i++) pthread_create(&threads[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("done %llu\n", (unsigned long long)(sink & 1));
    return 0;
}
