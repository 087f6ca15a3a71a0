/*
 * The signal mask and the synchronous reads of signals, interposed for the engine's signal.
 * A thread that blocks it may be reading it synchronously (signalfd, sigwait, sigwaitinfo,
 * sigtimedwait, sigpending) for a timer of its own: any signal of the engine's left pending
 * there, or queued to it meanwhile, would be read as the program's. So once the program has
 * shown it reads the engine's signal so (one of those calls with it in the set), as a thread
 * blocks the signal its timer or counter is disarmed, the sampler thread stops signalling it,
 * and the engine's signals already pending on it are taken off its queue (the program's own
 * stay); as it unblocks the signal, sampling resumes. A thread about to read does the same
 * if it blocks the signal already. The registry (thread_registry.c) does the first two under
 * its lock, with the thread's new mask set only after: a signal sent before is either
 * delivered or pending and taken off, and none is sent after.
 *
 * Until the program reads the signal synchronously, a mask change is libc's call alone: an
 * engine's signal pending while a thread blocks it is a sample taken at the unblocking, as
 * before, and a program that blocks every signal around its critical sections pays nothing
 * (a disarm and an arm cost 1.5-8 us a pair, against 0.33 us for the two calls). Only the
 * calls that block or unblock the engine's signal take that path. A thread that changes its
 * mask without these functions (a raw system call, siglongjmp, setcontext) is found by the
 * sampler thread's scan of the threads' masks (ThreadScan.swift), which disarms it as well,
 * within its interval.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"
#include "wait_frames.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>

/* libc's definitions, looked up as the library loads: a mask may be changed, or a signal
 * read, in a signal handler (the engine's own, a program's), where the loader must not be
 * entered. */
enum { REAL_SIGNALFD, REAL_SIGPENDING, REAL_COUNT };
static const char *const real_names[REAL_COUNT] = {"signalfd", "sigpending"};
static void *_Atomic real_functions[REAL_COUNT];

__attribute__((constructor)) static void resolve_real_functions(void) {
    for (int which = 0; which < REAL_COUNT; which++) ss_next_symbol(real_names[which], &real_functions[which]);
}

static void *real_function(int which) { return ss_real_function(real_names[which], &real_functions[which]); }

/* Whether the program has read the engine's signal synchronously (see above). */
static _Atomic int synchronous_reader;

static int real_sigpending(sigset_t *set) {
    __typeof__(&sigpending) function = real_function(REAL_SIGPENDING);
    return function ? function(set) : -1;
}

static int real_sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
    return ss_wait_resolve(SS_FRAMED_SLOT_sigtimedwait) ? ss_framed_sigtimedwait(set, info, timeout) : -1;
}

void ss_discard_pending_own_signals(int signo) {
    enum { KEPT_CAPACITY = 32 };
    sigset_t only, previous;
    if (real_sigpending(&only) == 0 && sigismember(&only, signo) != 1) return; /* the usual case: one call */
    siginfo_t kept[KEPT_CAPACITY];
    int kept_count = 0;
    sigemptyset(&only);
    sigaddset(&only, signo);
    ss_real_sigmask(SIG_BLOCK, &only, &previous);
    const struct timespec no_wait = {0, 0};
    siginfo_t info;
    while (kept_count < KEPT_CAPACITY && real_sigtimedwait(&only, &info, &no_wait) == signo) {
        if (ss_engine_of_signal(&info)) continue;
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

/* Whether the caller is a vfork child: it shares its parent's memory and thread-local cache
 * of the thread id, so what it does must not reach the parent thread's registry entry. */
static int in_vfork_child(void) { return (int32_t)syscall(SYS_gettid) != ss_current_tid(); }

/* pthread_sigmask's contract (an error number back), for both interposers. */
static int change_mask(int how, const sigset_t *set, sigset_t *old) {
    int signo = ss_engine_signal();
    if (!set || signo <= 0 || ss_tls_excluded || !ss_engine_running()) return ss_real_sigmask(how, set, old);
    /* Blocking or unblocking other signals leaves the engine's as it is. */
    if ((how == SIG_BLOCK || how == SIG_UNBLOCK) && sigismember(set, signo) != 1) return ss_real_sigmask(how, set, old);
    /* With no synchronous reader, a thread is disarmed only by the mask scan: only an unblocking,
     * while some thread is disarmed, may have to arm this one again. */
    int reader = atomic_load(&synchronous_reader);
    if (!reader && (how == SIG_BLOCK || !ss_thread_any_blocked())) return ss_real_sigmask(how, set, old);
    /* Read before anything changes, as libc reads it: a bad pointer faults here. */
    sigset_t wanted = *set, current, next;
    int status = ss_real_sigmask(SIG_BLOCK, NULL, &current);
    if (status != 0) return status;
    if (apply(how, &wanted, &current, &next) != 0) return ss_real_sigmask(how, &wanted, old);
    int blocks = sigismember(&next, signo) == 1;
    if (blocks == (sigismember(&current, signo) == 1) || (blocks && !reader) || in_vfork_child())
        return ss_real_sigmask(how, &wanted, old);
    ss_thread_mask_engine_signal(blocks, &next);
    if (blocks) ss_discard_pending_own_signals(signo);
    if (old) *old = current;
    return 0;
}

SS_INTERPOSER int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) { return change_mask(how, set, old); }

SS_INTERPOSER int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    int status = change_mask(how, set, old);
    if (status == 0) return 0;
    errno = status;
    return -1;
}

/* The calling thread is about to read the signals of `set` synchronously (NULL: every
 * pending one, for sigpending). If the engine's signal is among them, threads that block it
 * are disarmed from now on, and this one now if it blocks it, with the engine's signals
 * pending on it taken off its queue. Noted before any session too (SIGPROF, the signal a
 * session takes unless the program's handler has it): a signalfd made at start-up is read
 * with read(), which is not interposed, so a later session must know of it. */
static void before_synchronous_read(const sigset_t *set) {
    int signo = ss_engine_signal() > 0 ? ss_engine_signal() : SIGPROF;
    if (ss_tls_excluded || (set && sigismember(set, signo) != 1)) return;
    atomic_store(&synchronous_reader, 1);
    if (!ss_engine_running() || in_vfork_child()) return;
    int saved_errno = errno;
    sigset_t current;
    if (ss_real_sigmask(SIG_BLOCK, NULL, &current) == 0 && sigismember(&current, signo) == 1) {
        ss_thread_mask_engine_signal(1, &current);
        ss_discard_pending_own_signals(signo);
    }
    errno = saved_errno;
}

SS_INTERPOSER int signalfd(int fd, const sigset_t *mask, int flags) {
    __typeof__(&signalfd) real = real_function(REAL_SIGNALFD);
    if (!real) return -1;
    before_synchronous_read(mask);
    return real(fd, mask, flags);
}

SS_INTERPOSER int sigwait(const sigset_t *set, int *signo) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_sigwait)) return ENOSYS;
    before_synchronous_read(set);
    return ss_framed_sigwait(set, signo);
}

SS_INTERPOSER int sigwaitinfo(const sigset_t *set, siginfo_t *info) {
    if (!ss_wait_resolve(SS_FRAMED_SLOT_sigwaitinfo)) return -1;
    before_synchronous_read(set);
    return ss_framed_sigwaitinfo(set, info);
}

SS_INTERPOSER int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
    before_synchronous_read(set);
    return real_sigtimedwait(set, info, timeout);
}

SS_INTERPOSER int sigpending(sigset_t *set) {
    before_synchronous_read(NULL);
    return real_sigpending(set);
}
