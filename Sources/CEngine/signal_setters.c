/*
 * The other public ways to set a signal's action: signal (bsd_signal and
 * ssignal are glibc's other names for it), sysv_signal, sigset, sigignore
 * and siginterrupt. glibc builds each on its internal sigaction, which the
 * interposed one never sees. For the signals the engine virtualizes they are
 * rebuilt here on the interposed sigaction, with glibc 2.36's flags, masks and
 * checks; every other signal goes straight to libc's own function.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* Signals siginterrupt last made interrupting: glibc's signal() leaves
 * SA_RESTART off for them (its own set, _sigintr, is hidden in libc). */
static _Atomic uint64_t interrupting;

static uint64_t signal_bit(int signo) {
    return signo >= 1 && signo <= 64 ? UINT64_C(1) << (signo - 1) : 0;
}

/* Sets `handler` with `flags` through the interposed sigaction, blocking the
 * signal itself in the handler when `mask_self`; the old action goes to
 * `previous` (may be NULL). Returns sigaction's result. */
static int set_handler(int signo, sighandler_t handler, int flags, int mask_self, struct sigaction *previous) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    if (mask_self) sigaddset(&action.sa_mask, signo);
    action.sa_flags = flags;
    return sigaction(signo, &action, previous);
}

/* signal() and sysv_signal() on a virtualized signal: SIG_ERR refused, then
 * set_handler; the old handler returned, or SIG_ERR. */
static sighandler_t replace_handler(int signo, sighandler_t handler, int flags, int mask_self) {
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction previous;
    if (set_handler(signo, handler, flags, mask_self, &previous) != 0) return SIG_ERR;
    return previous.sa_handler;
}

/* libc's own `name`, a setter of signal()'s type, found once into `cache`, for a signal the
 * engine does not virtualize; SIG_ERR when libc has none. */
static sighandler_t libc_setter(const char *name, void *_Atomic *cache, int signo, sighandler_t handler) {
    sighandler_t (*libc)(int, sighandler_t) = ss_real_function(name, cache);
    return libc ? libc(signo, handler) : SIG_ERR;
}

/* glibc's __bsd_signal: the signal blocked in its handler, system calls
 * restarted unless siginterrupt said otherwise. */
SS_INTERPOSER sighandler_t signal(int signo, sighandler_t handler) {
    if (!ss_signal_is_virtualized(signo)) {
        static void *_Atomic cache;
        return libc_setter("signal", &cache, signo, handler);
    }
    return replace_handler(signo, handler, atomic_load(&interrupting) & signal_bit(signo) ? 0 : SA_RESTART, 1);
}

/* glibc's names for the same function as signal. */
sighandler_t bsd_signal(int signo, sighandler_t handler) __attribute__((alias("signal")));
sighandler_t ssignal(int signo, sighandler_t handler) __attribute__((alias("signal")));

/* System V's one-shot handler: reset to SIG_DFL when called, the signal not
 * blocked in it, system calls not restarted. */
SS_INTERPOSER sighandler_t sysv_signal(int signo, sighandler_t handler) {
    if (!ss_signal_is_virtualized(signo)) {
        static void *_Atomic cache;
        return libc_setter("sysv_signal", &cache, signo, handler);
    }
    return replace_handler(signo, handler, SA_ONESHOT | SA_NOMASK | SA_INTERRUPT, 0);
}

/* The name <signal.h> gives sysv_signal in X/Open mode. */
sighandler_t __sysv_signal(int signo, sighandler_t handler) __attribute__((alias("sysv_signal")));

/* System V's sigset: SIG_HOLD blocks the signal; any other disposition is
 * set with no flags and unblocks it. Returns SIG_HOLD if it was blocked. */
SS_INTERPOSER sighandler_t sigset(int signo, sighandler_t disposition) {
    if (!ss_signal_is_virtualized(signo)) {
        static void *_Atomic cache;
        return libc_setter("sigset", &cache, signo, disposition);
    }
    sigset_t just_this, mask_before;
    sigemptyset(&just_this);
    sigaddset(&just_this, signo);
    struct sigaction previous;
    if (disposition == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &just_this, &mask_before) < 0) return SIG_ERR;
        if (sigismember(&mask_before, signo)) return SIG_HOLD;
        if (sigaction(signo, NULL, &previous) < 0) return SIG_ERR;
        return previous.sa_handler;
    }
    if (set_handler(signo, disposition, 0, 0, &previous) != 0) return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &just_this, &mask_before) < 0) return SIG_ERR;
    return sigismember(&mask_before, signo) ? SIG_HOLD : previous.sa_handler;
}

/* System V's sigignore: SIG_IGN with no flags. */
SS_INTERPOSER int sigignore(int signo) {
    if (!ss_signal_is_virtualized(signo)) {
        static void *_Atomic cache;
        __typeof__(&sigignore) libc = ss_real_function("sigignore", &cache);
        return libc ? libc(signo) : -1;
    }
    return set_handler(signo, SIG_IGN, 0, 0, NULL);
}

/* Turns SA_RESTART off (interrupt) or on in the signal's current action. */
static int set_restart_of_virtualized(int signo, int interrupt) {
    struct sigaction action;
    if (sigaction(signo, NULL, &action) < 0) return -1;
    if (interrupt)
        action.sa_flags &= ~SA_RESTART;
    else
        action.sa_flags |= SA_RESTART;
    return sigaction(signo, &action, NULL);
}

/* Whether the signal interrupts system calls, now and for later signal() calls. */
SS_INTERPOSER int siginterrupt(int signo, int interrupt) {
    int status;
    if (ss_signal_is_virtualized(signo)) {
        status = set_restart_of_virtualized(signo, interrupt);
    } else {
        static void *_Atomic cache;
        __typeof__(&siginterrupt) libc = ss_real_function("siginterrupt", &cache);
        status = libc ? libc(signo, interrupt) : -1;
    }
    if (status == 0) {
        if (interrupt)
            atomic_fetch_or(&interrupting, signal_bit(signo));
        else
            atomic_fetch_and(&interrupting, ~signal_bit(signo));
    }
    return status;
}
