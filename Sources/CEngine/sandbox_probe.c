/*
 * perf_event_open behind the sandbox's back: a seccomp filter (a container runtime's profile,
 * systemd's SystemCallFilter=@system-service) may refuse the call, or kill the whole process for
 * it (systemd's default action, SIGSYS), and what it does to a call is known only by trying.
 * So every perf_event_open of the engine goes through ss_perf_event_open: where the calling
 * thread runs under a filter (`Seccomp: 2` in its /proc status; filters are per thread, and
 * the caller's decide), the call is tried first in a short-lived child that does nothing else,
 * and made here only if the child lived through it. The filter is read before every call, and
 * a verdict is kept for a number of filters: one installed later (by the program, or for every
 * thread with TSYNC) is tried again. Never called in signal context.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a child may take to answer: a filter that hands the call to a supervisor
 * (SECCOMP_RET_USER_NOTIF) may never answer. */
enum { PROBE_ANSWER_MS = 500 };

/* The calling thread's seccomp mode (0 none, 1 strict, 2 filter) and number of filters, from
 * /proc/thread-self/status; -1 where the file cannot be read (then a filter is presumed). */
static int seccomp_of_calling_thread(int *filters) {
    char text[4096];
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    ssize_t length = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    *filters = -1;
    if (length <= 0) return -1;
    text[length] = 0;
    const char *mode = strstr(text, "\nSeccomp:"), *count = strstr(text, "\nSeccomp_filters:");
    if (count) *filters = atoi(count + strlen("\nSeccomp_filters:"));
    return mode ? atoi(mode + strlen("\nSeccomp:")) : 0;
}

/* The child, a copy of the process made by a raw clone (no atfork handler of the program's or
 * the profiler's runs): it makes only raw system calls. SIGSYS goes back to its default action
 * first (a filter's SECCOMP_RET_TRAP would otherwise run the program's handler here), every
 * other signal is blocked, and it is made undumpable with no core limit, so a kill leaves no
 * core file and reaches no crash collector. Exits 0 if the call succeeded, else with its
 * errno; the counter is on the child itself. */
static _Noreturn void probe_in_child(const struct perf_event_attr *attr) {
    uint64_t others = ~(1ULL << (SIGSYS - 1));
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &others, NULL, sizeof others);
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } default_action = {SIG_DFL, 0, NULL, 0};
    syscall(SYS_rt_sigaction, SIGSYS, &default_action, NULL, sizeof(uint64_t));
    struct rlimit no_core = {0, 0};
    syscall(SYS_setrlimit, RLIMIT_CORE, &no_core);
    syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0);
    long fd = syscall(SYS_perf_event_open, attr, (pid_t)0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    int code = fd >= 0 ? 0 : errno & 0xff;
    for (;;) syscall(SYS_exit_group, code);
}

/* What the filter does to `attr`'s call, tried in a child: 0 (it lets it through, whatever the
 * kernel then says), -errno (the child's refusal), SS_PERF_KILLED_BY_FILTER or
 * SS_PERF_HELD_BY_FILTER. The child's exit signal is 0: no SIGCHLD reaches the program, and
 * its wait(-1) never sees the child (only a __WALL or __WCLONE wait does). */
static int try_in_child(const struct perf_event_attr *attr) {
    long child = syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
    if (child == 0) probe_in_child(attr);
    if (child < 0) return -errno;
    int status = 0;
    pid_t reaped = 0;
    /* Looked at after 20 us, then twice as long each time up to 1 ms: a child answers in about
     * 100 us (a fork of this process and one call). */
    long pause_ns = 20000, waited_ns = 0;
    while (reaped == 0 && waited_ns < PROBE_ANSWER_MS * 1000000L) {
        reaped = waitpid((pid_t)child, &status, __WALL | WNOHANG);
        if (reaped < 0 && errno == EINTR) reaped = 0;
        if (reaped != 0) break;
        nanosleep(&(struct timespec){0, pause_ns}, NULL);
        waited_ns += pause_ns;
        if (pause_ns < 1000000) pause_ns *= 2;
    }
    if (reaped != child) {
        kill((pid_t)child, SIGKILL);
        while (waitpid((pid_t)child, &status, __WALL) < 0 && errno == EINTR) {}
        return SS_PERF_HELD_BY_FILTER;
    }
    if (WIFEXITED(status)) return -WEXITSTATUS(status);
    return WTERMSIG(status) == SIGSYS ? SS_PERF_KILLED_BY_FILTER : SS_PERF_HELD_BY_FILTER;
}

/* The last verdict, and the number of filters of the thread it was found for: kept for the
 * process, since threads inherit their creator's filters; a thread whose count differs (a
 * filter added since, by it or for every thread) tries again. */
static _Atomic int known_filters = -2;
static _Atomic int known_verdict;

int ss_perf_event_open(struct perf_event_attr *attr, int32_t tid) {
    int saved_errno = errno, filters;
    int mode = seccomp_of_calling_thread(&filters);
    if (mode != 0) {
        int verdict = atomic_load(&known_verdict);
        if (mode < 0 || filters != atomic_load(&known_filters)) {
            verdict = try_in_child(attr);
            atomic_store(&known_verdict, verdict);
            atomic_store(&known_filters, mode < 0 ? -2 : filters); /* unreadable: tried again next time */
        }
        errno = saved_errno;
        if (verdict != 0) return verdict;
    }
    long fd = syscall(SYS_perf_event_open, attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    int result = fd < 0 ? -errno : (int)fd;
    errno = saved_errno;
    return result;
}

const char *ss_perf_refusal_text(int error) {
    switch (error) {
    case SS_PERF_KILLED_BY_FILTER: return "a seccomp filter kills the process that calls it (tried in a child process)";
    case SS_PERF_HELD_BY_FILTER: return "a seccomp filter did not let a child process's call return";
    default: return strerror(-error);
    }
}
