/* gap_probe: what a profiler takes from the thread it samples, sample by sample.
 *
 * Spins for argv[1] seconds of its own CPU time reading CLOCK_MONOTONIC (vDSO, about 20 ns a
 * reading) and records every gap between two readings longer than 1.5 us: an interrupt, a
 * signal with its handler, a preemption. Gaps under 200 us are the thread's own losses (timer
 * interrupts, signal delivery, the handler, sigreturn); longer ones are mostly other processes
 * taking the core, and are left out (counted as preempted). Prints "gaps N lost_ms T preempted N": the bench takes
 * the difference to an unprofiled run and divides it by the samples the profiler delivered.
 * Other processes on the machine barely move it, unlike wall time.
 *
 * Build (from the repository): gcc -O2 -o gap_probe Scripts/probes/gap_probe.c */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void spin(uint64_t cpu_ns, uint64_t *gaps, uint64_t *lost_ns, uint64_t *preempted) {
    uint64_t last = now_ns(CLOCK_MONOTONIC), loops = 0, cpu_start = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (;;) {
        uint64_t now = now_ns(CLOCK_MONOTONIC), gap = now - last;
        last = now;
        if (gap > 1500 && gap < 200000) {
            ++*gaps;
            *lost_ns += gap;
        } else if (gap >= 200000) {
            ++*preempted;
        }
        if ((++loops & 4095) == 0 && now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start >= cpu_ns) break;
    }
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    uint64_t gaps = 0, lost_ns = 0, preempted = 0;
    spin((uint64_t)(seconds * 1e9), &gaps, &lost_ns, &preempted);
    printf("gaps %llu lost_ms %.3f preempted %llu\n", (unsigned long long)gaps, lost_ns * 1e-6, (unsigned long long)preempted);
    return 0;
}
