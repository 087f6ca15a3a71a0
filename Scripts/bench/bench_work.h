/* Helpers shared by the benchmark workloads: a fixed amount of CPU work that the optimizer
 * cannot delete, thread CPU clocks, and argument parsing.
 *
 * Unlike Tests/Programs/workload.h (which burns a fixed CPU *time*), every workload here does
 * a fixed amount of *work*, counted in blocks, so that a profiler's cost shows up as a longer
 * run: slowdown = time with profiler / time without. */
#ifndef STACKSAMPLER_BENCH_WORK_H
#define STACKSAMPLER_BENCH_WORK_H

#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* A function the profiler must see as a frame of its own (no inlining, cloning or merging). */
#define SAMPLED_FUNCTION __attribute__((noinline, noipa))

/* Iterations of the dependent multiply-add chain in one block (about 20 us on a 3 GHz core). */
#define BLOCK_ITERATIONS 16384

/* CPU time consumed so far by the calling thread, in seconds. */
static inline double thread_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* argv[index] as a whole count, or `fallback` when absent. */
static inline long count_argument(int argc, char **argv, int index, long fallback) {
    return argc > index ? strtol(argv[index], NULL, 10) : fallback;
}

/* `blocks` blocks of arithmetic in the caller's own frame; `salt` makes each caller's code
 * differ. Returns a value derived from all the work, so none of it is dead. No system calls:
 * the time a profiler sees here is pure user-mode CPU. */
static inline __attribute__((always_inline)) uint64_t burn_blocks(long blocks, uint64_t salt) {
    uint64_t x = salt;
    for (long b = 0; b < blocks; b++) {
        for (int i = 0; i < BLOCK_ITERATIONS; i++) {
            x = x * 6364136223846793005ULL + salt;
        }
    }
    return x;
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

/* A small deterministic generator (xorshift64*). */
static inline uint64_t next_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

#endif
