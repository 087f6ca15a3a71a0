/* masked_waits: the race-free way to wait, as the manual pages teach it. For ROUNDS rounds
 * (argv[1], default 300) the main thread blocks every signal, works about 3 ms of CPU in
 * `masked_work`, then waits 1 ms with its old mask set for the wait alone: by ppoll, pselect,
 * epoll_pwait, or sigsuspend for a SIGALRM of its own (a 1 ms ITIMER_REAL). Nothing else signals
 * it, so no wait may end early: prints `waits N`, `eintr_ppoll`, `eintr_pselect`, `eintr_epoll`
 * (waits that returned EINTR) and `sigsuspend_early` (sigsuspend woken before its SIGALRM).
 * Build: gcc -O2 -o masked_waits masked_waits.c */
#include "workload.h"
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms;
static volatile uint64_t sink;

static void on_alarm(int signo) {
    (void)signo;
    alarms++;
}

SAMPLED_FUNCTION static void masked_work(void) { sink ^= burn_cpu(0.003, 0x27BB2EE687B0B0FDULL); }

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 300;
    struct sigaction action = {0};
    action.sa_handler = on_alarm;
    sigaction(SIGALRM, &action, NULL);
    const int epoll = epoll_create1(EPOLL_CLOEXEC);
    sigset_t all, original;
    sigfillset(&all);
    long eintr_ppoll = 0, eintr_pselect = 0, eintr_epoll = 0, sigsuspend_early = 0;
    for (int round = 0; round < rounds; round++) {
        sigprocmask(SIG_BLOCK, &all, &original);
        masked_work();
        const struct timespec wait = {0, 1000000};
        switch (round % 4) {
        case 0:
            if (ppoll(NULL, 0, &wait, &original) < 0 && errno == EINTR) eintr_ppoll++;
            break;
        case 1:
            if (pselect(0, NULL, NULL, NULL, &wait, &original) < 0 && errno == EINTR) eintr_pselect++;
            break;
        case 2: {
            struct epoll_event event;
            if (epoll_pwait(epoll, &event, 1, 1, &original) < 0 && errno == EINTR) eintr_epoll++;
            break;
        }
        default: {
            const sig_atomic_t before = alarms;
            const struct itimerval once = {{0, 0}, {0, 1000}};
            setitimer(ITIMER_REAL, &once, NULL);
            sigsuspend(&original);
            if (alarms == before) {
                sigsuspend_early++;
                while (alarms == before) sigsuspend(&original);
            }
        }
        }
        sigprocmask(SIG_SETMASK, &original, NULL);
    }
    printf("waits %d\neintr_ppoll %ld\neintr_pselect %ld\neintr_epoll %ld\nsigsuspend_early %ld\n", rounds, eintr_ppoll,
           eintr_pselect, eintr_epoll, sigsuspend_early);
    return 0;
}
