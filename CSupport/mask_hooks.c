/*
 * The signal mask, interposed for the engine's signal. A thread that blocks it may be
 * reading it synchronously (signalfd, sigwait, sigwaitinfo, sigtimedwait, sigpending) for
 * a timer of its own: any signal of the engine's left pending there, or queued to it
 * meanwhile, would be read as the program's. So as a thread blocks the engine's signal its
 * timer or counter is disarmed, the sampler thread stops signalling it, and the engine's
 * signals already pending on it are taken off its queue (the program's own stay); as it
 * unblocks the signal, sampling resumes. The registry (thread_registry.c) does the first two
 * under its lock, with the thread's new mask set only after: a signal sent before is either
 * delivered or pending and taken off, and none is sent after.
 *
 * Only the calls that block or unblock the engine's signal take that path; any other change
 * of mask is libc's call alone. A thread that changes its mask without these functions (a
 * raw system call, siglongjmp, setcontext) is found by the sampler thread's scan of the
 * threads' masks instead (ThreadScan.swift), which disarms it as well, within its interval.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static void *_Atomic real_sigmask;

/* Looked up as the library loads: a mask may be changed in a signal handler (the engine's
 * own, a program's), where the loader must not be entered. */
__attribute__((constructor)) static void resolve_real_sigmask(void) { ss_next_symbol("pthread_sigmask", &real_sigmask); }

int ss_real_sigmask(int how, const sigset_t *set, sigset_t *old) {
    sigmask_fn function = (sigmask_fn)ss_next_symbol("pthread_sigmask", &real_sigmask);
    return function ? function(how, set, old) : ENOSYS;
}

void ss_discard_pending_own_signals(int signo) {
    enum { KEPT_CAPACITY = 32 };
    siginfo_t kept[KEPT_CAPACITY];
    int kept_count = 0;
    sigset_t only, previous;
    sigemptyset(&only);
    sigaddset(&only, signo);
    ss_real_sigmask(SIG_BLOCK, &only, &previous);
    const struct timespec no_wait = {0, 0};
    siginfo_t info;
    while (kept_count < KEPT_CAPACITY && sigtimedwait(&only, &info, &no_wait) == signo) {
        if (ss_signal_is_engines(&info)) continue;
        kept[kept_count++] = info;
    }
    pid_t pid = getpid();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < kept_count; i++) syscall(SYS_rt_tgsigqueueinfo, pid, tid, signo, &kept[i]);
    ss_real_sigmask(SIG_SETMASK, &previous, NULL);
}

/* The mask `how` and `set` make of `current`, in `next`; EINVAL for an unknown `how`. */
static int apply(int how, const sigset_t *set, const sigset_t *current, sigset_t *next) {
    switch (how) {
    case SIG_BLOCK: sigorset(next, current, set); return 0;
    case SIG_SETMASK: *next = *set; return 0;
    case SIG_UNBLOCK:
        *next = *current;
        for (int signo = 1; signo < NSIG; signo++)
            if (sigismember(set, signo) == 1) sigdelset(next, signo);
        return 0;
    default: return EINVAL;
    }
}

/* pthread_sigmask's contract (an error number back), for both interposers. */
static int change_mask(int how, const sigset_t *set, sigset_t *old) {
    int signo = ss_engine_signal();
    if (!set || signo <= 0 || ss_tls_excluded || !ss_engine_running()) return ss_real_sigmask(how, set, old);
    /* Blocking or unblocking other signals leaves the engine's as it is. */
    if ((how == SIG_BLOCK || how == SIG_UNBLOCK) && sigismember(set, signo) != 1) return ss_real_sigmask(how, set, old);
    /* Read before anything changes, as libc reads it: a bad pointer faults here. */
    sigset_t wanted = *set, current, next;
    int status = ss_real_sigmask(SIG_BLOCK, NULL, &current);
    if (status != 0) return status;
    if (apply(how, &wanted, &current, &next) != 0) return ss_real_sigmask(how, &wanted, old);
    int blocks = sigismember(&next, signo) == 1;
    if (blocks == (sigismember(&current, signo) == 1)) return ss_real_sigmask(how, &wanted, old);
    ss_thread_mask_engine_signal(blocks, &next);
    if (blocks) ss_discard_pending_own_signals(signo);
    if (old) *old = current;
    return 0;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) { return change_mask(how, set, old); }

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    int status = change_mask(how, set, old);
    if (status == 0) return 0;
    errno = status;
    return -1;
}
