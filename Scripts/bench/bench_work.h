/* Helpers of the benchmark-only workloads and the probes, beside the test programs' own
 * (Tests/Programs/workload.h: SAMPLED_FUNCTION, thread CPU clocks, burn_blocks, next_random),
 * which the benchmark workloads shared with the tests (split, threads) use alone.
 *
 * Every workload here does a fixed amount of *work*, counted in blocks, so that a profiler's
 * cost shows up as a longer run: slowdown = time with profiler / time without. */
#ifndef STACKSAMPLER_BENCH_WORK_H
#define STACKSAMPLER_BENCH_WORK_H

#include "../../Tests/Programs/workload.h"
#include <signal.h>

/* argv[index] as a whole count, or `fallback` when absent. */
static inline long count_argument(int argc, char **argv, int index, long fallback) {
    return argc > index ? strtol(argv[index], NULL, 10) : fallback;
}

/* For the probes: `handler` on SIGPROF, and a timer on the calling thread's CPU clock that
 * raises it every `period_ns` from now. Returns 0, or -1 after printing why. */
static inline int arm_thread_cpu_timer(void (*handler)(int), long period_ns) {
    struct sigaction action = {.sa_handler = handler, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, NULL) != 0) { perror("sigaction"); return -1; }
    struct sigevent event = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGPROF};
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) { perror("timer_create"); return -1; }
    const struct timespec period = {period_ns / 1000000000L, period_ns % 1000000000L};
    const struct itimerspec spec = {.it_interval = period, .it_value = period};
    if (timer_settime(timer, 0, &spec, NULL) != 0) { perror("timer_settime"); return -1; }
    return 0;
}

#endif
