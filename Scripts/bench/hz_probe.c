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
    struct sigaction action = {.sa_handler = on_tick, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, NULL) != 0) { perror("sigaction"); return 1; }
    struct sigevent event = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGPROF};
    timer_t timer;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) { perror("timer_create"); return 1; }
    struct itimerspec spec = {.it_interval = {0, 50000}, .it_value = {0, 50000}};
    const double start = thread_cpu_seconds();
    if (timer_settime(timer, 0, &spec, NULL) != 0) { perror("timer_settime"); return 1; }
    uint64_t sink = 0;
    while (thread_cpu_seconds() - start < seconds) sink ^= burn_blocks(1, sink | 1);
    const double elapsed = thread_cpu_seconds() - start;
    const int count = ticks;
    printf("hz %.0f\nsink %llu\n", count / elapsed, (unsigned long long)(sink & 1));
    return 0;
}
