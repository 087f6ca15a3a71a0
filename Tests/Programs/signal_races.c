/* signal_races: signals that meet the profiler's own signal machinery half-way. argv[1]:
 *   interrupt    siginterrupt(SIGALRM, 1); signal(SIGALRM, handler); alarm(1); read() of an
 *                empty pipe: prints `read EINTR` when the alarm interrupts it (as libc
 *                promises), `read restarted` never (it would block for good).
 *   interrupt-sigprof  the same with SIGPROF, the profiler's own signal, its handler set with
 *                sigaction without SA_RESTART, sent by a thread after 1 s.
 *   bad-pointer  sigaction(SIGSEGV, <unmapped address>, NULL): dies of SIGSEGV, as libc does
 *                when it reads the action.
 *   writers      a SIGPROF handler of its own fed by ITIMER_PROF at 1 kHz while both the main
 *                thread and a second thread keep setting that same handler with sigaction, for
 *                about argv[2] seconds (default 1) of CPU: prints `ticks N` (N > 0), exits 0.
 *   user-segv    a second thread sends SIGSEGV with tgkill to the main thread, which spins
 *                5000 frames deep with a SIGSEGV handler of its own, one at a time, each
 *                waiting until the handler saw it, for about argv[2] seconds (default 1):
 *                prints `sent N`, `received N`, `lost L` and exits 0 when L is 0 (3 otherwise;
 *                it stops at the first signal not seen within 2 s).
 * A watchdog thread ends a run that hangs (a handler waiting forever) after 20 s: it prints
 * `watchdog: hung` on stderr and exits with status 5.
 *
 * Build: gcc -O2 -pthread -o signal_races signal_races.c */
#define _GNU_SOURCE
#include "workload.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* Ends the process after 20 s. It blocks every signal, so that no handler stuck on this thread
 * can keep it from doing so, and sleeps again when a sleep ends early. */
static void *watchdog(void *unused) {
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    const double end = clock_seconds(CLOCK_MONOTONIC) + 20;
    while (clock_seconds(CLOCK_MONOTONIC) < end) sleep(1);
    fprintf(stderr, "watchdog: hung\n");
    _exit(5);
}

static void on_alarm(int signo) { (void)signo; }

static pid_t main_tid;

/* Sends SIGPROF to the main thread after 1 s, as a profiler's timer could. */
static void *send_sigprof_later(void *unused) {
    (void)unused;
    sleep(1);
    syscall(SYS_tgkill, getpid(), main_tid, SIGPROF);
    return NULL;
}

/* A handler for `signo` that does not restart system calls, set with siginterrupt and
 * signal() (SIGALRM) or with sigaction and no SA_RESTART (SIGPROF); the signal arrives in 1 s. */
static int interrupt_read(int signo) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) return 4;
    if (signo == SIGALRM) {
        siginterrupt(signo, 1);
        signal(signo, on_alarm);
        alarm(1);
    } else {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = on_alarm;
        sigemptyset(&action.sa_mask);
        sigaction(signo, &action, NULL);
        pthread_t sender;
        pthread_create(&sender, NULL, send_sigprof_later, NULL);
    }
    char byte;
    ssize_t got = read(pipe_ends[0], &byte, 1);
    printf("read %s\n", got < 0 && errno == EINTR ? "EINTR" : "restarted");
    return 0;
}

static int bad_pointer(void) {
    sigaction(SIGSEGV, (const struct sigaction *)(uintptr_t)16, NULL);
    printf("sigaction returned\n");
    return 0;
}

static _Atomic int ticks;
static _Atomic int stop_writing;

static void on_sigprof(int signo) {
    (void)signo;
    atomic_fetch_add(&ticks, 1);
}

/* Sets the program's SIGPROF handler again, as a program that sets it often would. */
static void set_sigprof_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_sigprof;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, NULL);
}

static void *keep_writing(void *unused) {
    (void)unused;
    while (!atomic_load(&stop_writing)) set_sigprof_handler();
    return NULL;
}

static int writers(double seconds) {
    set_sigprof_handler();
    pthread_t writer;
    pthread_create(&writer, NULL, keep_writing, NULL);
    const struct itimerval every_ms = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_PROF, &every_ms, NULL);
    const double end = thread_cpu_seconds() + seconds;
    while (thread_cpu_seconds() < end) {
        for (int i = 0; i < 1000; i++) set_sigprof_handler();
    }
    const struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    atomic_store(&stop_writing, 1);
    pthread_join(writer, NULL);
    printf("ticks %d\n", atomic_load(&ticks));
    return atomic_load(&ticks) > 0 ? 0 : 3;
}

static _Atomic int received;
static _Atomic int spinning = 1;

static volatile uint64_t depth_sink;

/* Spins `depth` frames deep until the sender is done: a long stack makes each sample's unwind
 * last long enough for many SIGSEGVs to land in one. */
SAMPLED_FUNCTION uint64_t spin_deep(int depth) {
    if (depth > 0) {
        uint64_t x = spin_deep(depth - 1);
        depth_sink += (uint64_t)depth; /* not a tail call */
        return x;
    }
    uint64_t x = 1;
    while (atomic_load_explicit(&spinning, memory_order_relaxed)) x = x * 6364136223846793005ULL + 1;
    return x;
}

static void on_user_segv(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)context;
    if (info->si_code == SI_TKILL && info->si_pid == getpid()) atomic_fetch_add(&received, 1);
}

/* Sends SIGSEGV to the main thread, one at a time, each some microseconds after the handler saw
 * the last (so that it lands anywhere in the main thread's work, samples included), for
 * `seconds`; stops at the first one the handler has not seen 2 s later. */
static void *send_segv(void *seconds) {
    int sent = 0, lost = 0;
    const double end = clock_seconds(CLOCK_MONOTONIC) + *(double *)seconds;
    while (clock_seconds(CLOCK_MONOTONIC) < end) {
        const double pause_end = clock_seconds(CLOCK_MONOTONIC) + 20e-6 * (sent % 5);
        while (clock_seconds(CLOCK_MONOTONIC) < pause_end) {}
        syscall(SYS_tgkill, getpid(), main_tid, SIGSEGV);
        sent++;
        const double deadline = clock_seconds(CLOCK_MONOTONIC) + 2.0;
        while (atomic_load(&received) < sent && clock_seconds(CLOCK_MONOTONIC) < deadline) {}
        if (atomic_load(&received) < sent) {
            lost = sent - atomic_load(&received);
            break;
        }
    }
    atomic_store(&spinning, 0);
    printf("sent %d\nreceived %d\nlost %d\n", sent, atomic_load(&received), lost);
    return (void *)(intptr_t)lost;
}

static int user_segv(double seconds) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_user_segv;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    pthread_t sender;
    pthread_create(&sender, NULL, send_segv, &seconds);
    fprintf(stderr, "checksum %016llx\n", (unsigned long long)spin_deep(5000));
    void *lost;
    pthread_join(sender, &lost);
    return lost ? 3 : 0;
}

int main(int argc, char **argv) {
    pthread_t guard;
    pthread_create(&guard, NULL, watchdog, NULL);
    const char *scenario = argc > 1 ? argv[1] : "interrupt";
    const double seconds = argc > 2 ? strtod(argv[2], NULL) : 1.0;
    main_tid = (pid_t)syscall(SYS_gettid);
    if (strcmp(scenario, "interrupt") == 0) return interrupt_read(SIGALRM);
    if (strcmp(scenario, "interrupt-sigprof") == 0) return interrupt_read(SIGPROF);
    if (strcmp(scenario, "bad-pointer") == 0) return bad_pointer();
    if (strcmp(scenario, "writers") == 0) return writers(seconds);
    if (strcmp(scenario, "user-segv") == 0) return user_segv(seconds);
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
}
