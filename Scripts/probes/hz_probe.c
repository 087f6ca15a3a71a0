/* hz_probe: estimates the kernel's scheduler tick rate (CONFIG_HZ).
 *
 * Arms a POSIX timer on this thread's CPU-time clock with a 50 us period and burns CPU for
 * argv[1] seconds (default 0.4) of thread CPU time. CPU-clock timers are checked on scheduler
 * ticks, so the signal count per CPU-second is the tick rate. Prints `hz N` (rounded). */
#include "bench_work.h"
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t ticks;

static void on_tick(int signo) { (void)signo; ticks++; }

int main(int argc, char **argv) {
    const double seconds = argc > 1 ? strtod(argv[1], NULL) : 0.4;
    const double start = thread_cpu_seconds();
    if (arm_thread_cpu_timer(on_tick, 50000) != 0) return 1;
    uint64_t sink = 0;
    while (thread_cpu_seconds() - start < seconds) sink ^= burn_blocks(1, sink | 1);
    const double elapsed = thread_cpu_seconds() - start;
    const int count = ticks;
    printf("hz %.0f\nsink %llu\n", count / elapsed, (unsigned long long)(sink & 1));
    return 0;
}
