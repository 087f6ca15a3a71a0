/* disposition_setters: a SIGPROF handler set with one of libc's older ways to set a signal's
 * action, in main (after a preloaded profiler started), with no timer of the program's armed.
 * argv[1] names the way: signal, bsd_signal, ssignal, sysv_signal, __sysv_signal, sigset,
 * sigignore, __sigaction. The program then
 *   1. spins for about 0.5 s of CPU time (a profiler's signals arrive then),
 *   2. raises SIGPROF itself once,
 *   3. and reports what it saw, one `key value` a line:
 *      previous           what the setter returned: default, ignore, hold or other
 *      calls_during_spin  handler calls while spinning (0 without a profiler)
 *      calls_after_raise  handler calls after its own raise
 *      blocked_in_handler whether SIGPROF was blocked while the handler ran (yes/no/-)
 *      action_after_raise what sigaction reports then: own, default, ignore or other
 *      flags              SA_RESTART, SA_RESETHAND, SA_NODEFER of that action (r, o, n or -)
 *      sigset_hold        (sigset only) sigset(SIG_HOLD) then sigset(handler): what each returned
 * The output is the same with and without a profiler; exit status 0, 2 for an unknown way.
 *
 * Build: gcc -O2 -o disposition_setters disposition_setters.c */
#define _GNU_SOURCE
#include "workload.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

extern sighandler_t bsd_signal(int, sighandler_t);
extern int __sigaction(int, const struct sigaction *, struct sigaction *);

static volatile sig_atomic_t calls;
static volatile sig_atomic_t blocked_in_handler = -1;

/* The program's SIGPROF handler: counts its calls, notes whether SIGPROF is blocked in it. */
static void on_sigprof(int signo) {
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    blocked_in_handler = sigismember(&mask, signo);
    calls++;
}

static const char *describe(sighandler_t handler) {
    if (handler == SIG_DFL) return "default";
    if (handler == SIG_IGN) return "ignore";
    if (handler == SIG_HOLD) return "hold";
    if (handler == on_sigprof) return "own";
    return "other";
}

/* Sets the handler the named way; returns what that way reports as the previous handler. */
static int set_handler(const char *way, sighandler_t *previous) {
    if (strcmp(way, "signal") == 0) *previous = signal(SIGPROF, on_sigprof);
    else if (strcmp(way, "bsd_signal") == 0) *previous = bsd_signal(SIGPROF, on_sigprof);
    else if (strcmp(way, "ssignal") == 0) *previous = ssignal(SIGPROF, on_sigprof);
    else if (strcmp(way, "sysv_signal") == 0) *previous = sysv_signal(SIGPROF, on_sigprof);
    else if (strcmp(way, "__sysv_signal") == 0) *previous = __sysv_signal(SIGPROF, on_sigprof);
    else if (strcmp(way, "sigset") == 0) *previous = sigset(SIGPROF, on_sigprof);
    else if (strcmp(way, "sigignore") == 0) *previous = sigignore(SIGPROF) == 0 ? SIG_DFL : SIG_ERR;
    else if (strcmp(way, "__sigaction") == 0) {
        struct sigaction action, old;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_sigprof;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        *previous = __sigaction(SIGPROF, &action, &old) == 0 ? old.sa_handler : SIG_ERR;
    } else return 0;
    return 1;
}

int main(int argc, char **argv) {
    const char *way = argc > 1 ? argv[1] : "signal";
    sighandler_t previous;
    if (!set_handler(way, &previous)) {
        fprintf(stderr, "unknown way %s\n", way);
        return 2;
    }
    printf("previous %s\n", describe(previous));
    uint64_t checksum = burn_cpu(0.5, 7);
    printf("calls_during_spin %d\n", (int)calls);
    raise(SIGPROF);
    printf("calls_after_raise %d\n", (int)calls);
    printf("blocked_in_handler %s\n", blocked_in_handler < 0 ? "-" : blocked_in_handler ? "yes" : "no");
    struct sigaction reported;
    sigaction(SIGPROF, NULL, &reported);
    printf("action_after_raise %s\n", describe(reported.sa_handler));
    printf("flags %c%c%c\n", reported.sa_flags & SA_RESTART ? 'r' : '-', reported.sa_flags & SA_RESETHAND ? 'o' : '-',
           reported.sa_flags & SA_NODEFER ? 'n' : '-');
    if (strcmp(way, "sigset") == 0) {
        sighandler_t on_hold = sigset(SIGPROF, SIG_HOLD);
        sighandler_t after_hold = sigset(SIGPROF, on_sigprof);
        printf("sigset_hold %s %s\n", describe(on_hold), describe(after_hold));
    }
    fprintf(stderr, "checksum %016llx\n", (unsigned long long)checksum);
    return 0;
}
