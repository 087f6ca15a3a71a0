/* own_sigprof: a program that uses SIGPROF itself, to check a profiler leaves it working.
 *
 * In main (so after any preloaded library has started) it installs a SIGPROF handler with
 * sigaction, checks that sigaction reports that handler back, arms ITIMER_PROF at 100 Hz and
 * spins for argv[1] seconds (default 1) of process CPU time. Prints
 *   ticks N             handler calls
 *   expected M          process CPU seconds x 100, what ITIMER_PROF should deliver
 *   handler_reported yes|no
 * Exit status: 0 if N > 0, 3 if the handler was never called, 4 if sigaction did not report
 * the program's own handler.
 *
 * Build: gcc -O2 -o own_sigprof own_sigprof.c */
#include "workload.h"
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

/* The program's own SIGPROF handler: counts its calls. */
static void on_sigprof(int signal, siginfo_t *info, void *context) {
    (void)signal;
    (void)info;
    (void)context;
    ticks++;
}

/* Spins until the process has used `seconds` of CPU time. */
SAMPLED_FUNCTION uint64_t spin(double seconds) {
    const double end = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) + seconds;
    uint64_t x = 1;
    while (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) < end) {
        for (int i = 0; i < 16384; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        }
    }
    return x;
}

int main(int argc, char **argv) {
    const double seconds = seconds_argument(argc, argv, 1.0);
    struct sigaction action = {0};
    action.sa_sigaction = on_sigprof;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGPROF, &action, NULL) != 0) {
        perror("sigaction");
        return 1;
    }
    struct sigaction reported;
    sigaction(SIGPROF, NULL, &reported);
    const int handler_reported = (reported.sa_flags & SA_SIGINFO) && reported.sa_sigaction == on_sigprof;

    const struct itimerval every_10ms = {{0, 10000}, {0, 10000}};
    if (setitimer(ITIMER_PROF, &every_10ms, NULL) != 0) {
        perror("setitimer");
        return 1;
    }
    const uint64_t checksum = spin(seconds);
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);

    printf("ticks %d\nexpected %.0f\nhandler_reported %s\nchecksum %016llx\n", (int)ticks,
           clock_seconds(CLOCK_PROCESS_CPUTIME_ID) * 100.0, handler_reported ? "yes" : "no",
           (unsigned long long)checksum);
    if (!handler_reported) return 4;
    return ticks > 0 ? 0 : 3;
}
