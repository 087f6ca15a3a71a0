/* sigprof_reader: a program that takes SIGPROF itself, synchronously.
 *
 * main blocks SIGPROF before it creates a second thread, so both threads block it; it arms
 * ITIMER_PROF every 10 ms and both threads compute until the process has used argv[1] seconds
 * of CPU (default 1). main alone takes the SIGPROFs, between slices of work: in turn, it reads
 * every one pending from a non-blocking signalfd, or asks sigpending whether one is pending
 * and takes it with sigwait, sigwaitinfo or sigtimedwait (in turn). Neither thread ever
 * sleeps: the kernel charges ITIMER_PROF by scheduler ticks, which only match the CPU time
 * the program measures for threads that run all the time. Then main unblocks SIGPROF and
 * computes in `after_unblock` for argv[2] seconds of its CPU (default 0.2), where a profiler
 * samples it again. Prints
 *   signalfd N          SIGPROFs read from the signalfd
 *   sigwait N           SIGPROFs taken with the sigwait family
 *   received N          their sum
 *   expiries N          the timer's expiries: process CPU time at disarming / 10 ms
 *   foreign_codes N     SIGPROFs read whose si_code is not the kernel's (SI_KERNEL, what an
 *                       itimer sends): signals that are not the program's own
 * The kernel merges an expiry into one still pending, so a program gets at most its
 * expiries (plus one for an expiry racing the disarm). Exit status 0 (1: a call failed).
 *
 * Build: gcc -O2 -pthread -o sigprof_reader sigprof_reader.c */
#include "workload.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <unistd.h>

enum { PERIOD_US = 10000 };

static double seconds = 1;
static _Atomic int finished;
static int from_fd, from_wait, foreign_codes;
static volatile uint64_t sink;

/* A slice of computation (about 100 us) between two reads. */
SAMPLED_FUNCTION static void work_slice(uint64_t salt) { sink += burn_cpu(0.0001, salt); }

/* Computes with SIGPROF unblocked. */
SAMPLED_FUNCTION static void after_unblock(double cpu_seconds) { sink += burn_cpu(cpu_seconds, 3); }

/* Reads every SIGPROF pending from the signalfd. */
static void read_signalfd(int fd) {
    struct signalfd_siginfo info;
    while (read(fd, &info, sizeof info) == (ssize_t)sizeof info) {
        from_fd++;
        if (info.ssi_code != SI_KERNEL) foreign_codes++;
    }
}

/* Takes the SIGPROF sigpending shows, if any, with the `round`th of sigwait, sigwaitinfo and
 * sigtimedwait (no other thread takes it, so none of them waits). */
static void take_pending(const sigset_t *set, int round) {
    sigset_t pending;
    if (sigpending(&pending) != 0) exit(1);
    if (!sigismember(&pending, SIGPROF)) return;
    siginfo_t info;
    info.si_code = SI_KERNEL;
    int signo = -1;
    const struct timespec no_wait = {0, 0};
    if (round % 3 == 0) {
        if (sigwait(set, &signo) != 0) exit(1);
    } else {
        signo = round % 3 == 1 ? sigwaitinfo(set, &info) : sigtimedwait(set, &info, &no_wait);
    }
    if (signo != SIGPROF) exit(1);
    from_wait++;
    if (info.si_code != SI_KERNEL) foreign_codes++;
}

static int done(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID) >= seconds; }

/* Computes, blocking SIGPROF, until main is done. */
static void *worker(void *unused) {
    (void)unused;
    while (!atomic_load(&finished)) work_slice(2);
    return NULL;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1.0);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return 1;
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) { perror("signalfd"); return 1; }
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;

    const struct itimerval every = {{0, PERIOD_US}, {0, PERIOD_US}};
    if (setitimer(ITIMER_PROF, &every, NULL) != 0) { perror("setitimer"); return 1; }
    for (int round = 0; !done(); round++) {
        work_slice(1);
        if (round % 2 == 0)
            read_signalfd(fd);
        else
            take_pending(&set, round / 2);
    }
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    const double cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    atomic_store(&finished, 1);
    pthread_join(thread, NULL);
    read_signalfd(fd); /* an expiry pending at the disarm */
    if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0) return 1;
    after_unblock(argc > 2 ? strtod(argv[2], NULL) : 0.2);
    printf("signalfd %d\nsigwait %d\nreceived %d\nexpiries %d\nforeign_codes %d\n", from_fd, from_wait,
           from_fd + from_wait, (int)(cpu * 1e6 / PERIOD_US), foreign_codes);
    return 0;
}
