/* execer: exec and fork under the profiler. Every mode exits 0 when all went as expected.
 *   chain N         burns ~20 ms in `chain_work`, then execs itself with N-1; at 0 execs /bin/true.
 *   handoff         burns ~100 ms in `before_exec_work`, then execs itself as `after`,
 *                   which burns ~100 ms in `after_exec_work`. Each image first waits (at most
 *                   5 s) until a cpu-mode profiler has armed its timer or counter.
 *   rounds R C      R rounds of C forked children at once; each burns ~5 ms in `child_work`,
 *                   then half of them exec /bin/true and the others exit(0). Prints `children ok`.
 *   burst C         forks C children at once, each of which exits at once (exit handlers run).
 *                   Prints `children ok`.
 *   failed          burns ~100 ms in `before_failed_exec`, execs a path that does not exist
 *                   (prints `enoent` if that failed with ENOENT), then burns ~100 ms in
 *                   `after_failed_exec`.
 *   vfork N         N times: vfork, and the child execs /bin/true; then burns ~100 ms in
 *                   `after_vforks_work` (the parent's sampling must go on).
 *   thread-exec     a second thread burns ~20 ms in `thread_work` and execs /bin/true while
 *                   the main thread burns in `main_thread_work`.
 *   own-pending     blocks SIGPROF, sends itself one with kill(), burns ~50 ms of CPU in
 *                   `blocked_work`, then execs itself, unprofiled, as `check-pending`, which exits 0 if
 *                   exactly that SIGPROF (SI_USER, from its pid) is pending there: a profiler
 *                   takes its own signals off the queue at exec, never the program's.
 *   ignored         ignores SIGPROF, then execs itself as `check-ignored`, which exits 0 if
 *                   SIGPROF is still ignored there (exec keeps an ignored disposition).
 * Build: gcc -O2 -o execer execer.c */
#include "workload.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

volatile unsigned long sink;

/* Inlined, so that each caller below is the leaf of its own samples. */
static inline __attribute__((always_inline)) void burn(double seconds) {
    double end = cpu_seconds() + seconds;
    while (cpu_seconds() < end)
        for (int i = 0; i < 10000; i++) sink += i * sink;
}

__attribute__((noinline)) void chain_work(void) { burn(0.02); }
__attribute__((noinline)) void before_exec_work(void) { burn(0.1); }
__attribute__((noinline)) void after_exec_work(void) { burn(0.1); }
__attribute__((noinline)) void child_work(void) { burn(0.005); }
__attribute__((noinline)) void before_failed_exec(void) { burn(0.1); }
__attribute__((noinline)) void after_failed_exec(void) { burn(0.1); }
__attribute__((noinline)) void after_vforks_work(void) { burn(0.1); }
__attribute__((noinline)) void thread_work(void) { burn(0.02); }
__attribute__((noinline)) void main_thread_work(void) { burn(0.001); }
__attribute__((noinline)) void blocked_work(void) { burn(0.05); }

static int chain(const char *self, int remaining) {
    chain_work();
    if (remaining <= 0) {
        execv("/bin/true", (char *[]){"true", NULL});
    } else {
        char next[16];
        snprintf(next, sizeof next, "%d", remaining - 1);
        execv(self, (char *[]){(char *)self, "chain", next, NULL});
    }
    perror("execv");
    return 1;
}

/* Waits for `count` children; nonzero if each exited with status 0. */
static int all_exited_zero(const pid_t *pids, int count, int round) {
    int ok = 1;
    for (int i = 0; i < count; i++) {
        int status;
        if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "round %d child %d: status 0x%x\n", round, i, status);
            ok = 0;
        }
    }
    return ok;
}

static int burst(int children) {
    pid_t pids[children];
    for (int i = 0; i < children; i++) {
        pids[i] = fork();
        if (pids[i] < 0) { perror("fork"); return 1; }
        if (pids[i] == 0) exit(0);
    }
    int ok = all_exited_zero(pids, children, 0);
    printf("children %s\n", ok ? "ok" : "bad");
    return ok ? 0 : 1;
}

static int rounds(int count, int children) {
    int ok = 1;
    for (int round = 0; round < count; round++) {
        pid_t pids[children];
        for (int i = 0; i < children; i++) {
            pids[i] = fork();
            if (pids[i] < 0) { perror("fork"); return 1; }
            if (pids[i] == 0) {
                child_work();
                if (i % 2 == 0) exit(0); /* exit handlers run: the child's profile is written */
                execl("/bin/true", "true", (char *)NULL);
                _exit(99);
            }
        }
        if (!all_exited_zero(pids, children, round)) ok = 0;
    }
    printf("children %s\n", ok ? "ok" : "bad");
    return ok ? 0 : 1;
}

/* vfork, and /bin/true in the child; returns the child's pid (the child never returns). */
static pid_t vfork_true(void) {
    pid_t pid = vfork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(99);
    }
    return pid;
}

static int vforks(int count) {
    int ok = 1;
    for (int i = 0; i < count; i++) {
        pid_t pid = vfork_true();
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ok = 0;
    }
    after_vforks_work();
    printf("children %s\n", ok ? "ok" : "bad");
    return ok ? 0 : 1;
}

static void *exec_from_thread(void *unused) {
    (void)unused;
    thread_work();
    execl("/bin/true", "true", (char *)NULL);
    perror("execl");
    exit(1);
}

static int thread_exec(void) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, exec_from_thread, NULL) != 0) return 1;
    for (;;) main_thread_work(); /* until the exec replaces the process */
}

/* The new image is not profiled (STACKSAMPLER_OUTPUT left out of its environment): a session
 * of its own would arm timers whose signals, blocked there, would be pending too. */
static int own_pending(const char *self) {
    sigset_t profiling;
    sigemptyset(&profiling);
    sigaddset(&profiling, SIGPROF);
    sigprocmask(SIG_BLOCK, &profiling, NULL);
    kill(getpid(), SIGPROF);
    blocked_work();
    extern char **environ;
    char *unprofiled[256];
    int kept = 0;
    for (char **entry = environ; *entry && kept < 255; entry++)
        if (strncmp(*entry, "STACKSAMPLER_OUTPUT=", 20) != 0) unprofiled[kept++] = *entry;
    unprofiled[kept] = NULL;
    execve(self, (char *[]){(char *)self, "check-pending", NULL}, unprofiled);
    perror("execv");
    return 1;
}

static int check_pending(void) {
    sigset_t profiling;
    sigemptyset(&profiling);
    sigaddset(&profiling, SIGPROF);
    const struct timespec no_wait = {0, 0};
    siginfo_t info;
    int own = 0, other = 0;
    while (sigtimedwait(&profiling, &info, &no_wait) == SIGPROF) {
        if (info.si_code == SI_USER && info.si_pid == getpid()) own++; else other++;
    }
    printf("pending SIGPROF: %d own, %d other\n", own, other);
    return own == 1 && other == 0 ? 0 : 1;
}

static int failed(void) {
    before_failed_exec();
    execl("/nonexistent/stacksampler-execer", "missing", (char *)NULL);
    int error = errno;
    printf("%s\n", error == ENOENT ? "enoent" : strerror(error));
    after_failed_exec();
    return error == ENOENT ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "chain") == 0) return chain(argv[0], atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "handoff") == 0) {
        wait_until_cpu_sampling_armed(5);
        before_exec_work();
        execv(argv[0], (char *[]){argv[0], "after", NULL});
        perror("execv");
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "after") == 0) {
        wait_until_cpu_sampling_armed(5);
        after_exec_work();
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "rounds") == 0) return rounds(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "burst") == 0) return burst(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "failed") == 0) return failed();
    if (argc >= 3 && strcmp(argv[1], "vfork") == 0) return vforks(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "thread-exec") == 0) return thread_exec();
    if (argc >= 2 && strcmp(argv[1], "own-pending") == 0) return own_pending(argv[0]);
    if (argc >= 2 && strcmp(argv[1], "check-pending") == 0) return check_pending();
    if (argc >= 2 && strcmp(argv[1], "ignored") == 0) {
        signal(SIGPROF, SIG_IGN);
        execv(argv[0], (char *[]){argv[0], "check-ignored", NULL});
        perror("execv");
        return 1;
    }
    if (argc >= 2 && strcmp(argv[1], "check-ignored") == 0) {
        struct sigaction action;
        sigaction(SIGPROF, NULL, &action);
        int ignored = !(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_IGN;
        printf("SIGPROF %s\n", ignored ? "ignored" : "not ignored");
        return ignored ? 0 : 1;
    }
    fprintf(stderr, "usage: execer chain N | handoff | rounds R C | burst C | failed | vfork N | thread-exec | own-pending | ignored\n");
    return 64;
}
