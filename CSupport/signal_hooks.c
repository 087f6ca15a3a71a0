/*
 * sigaction/signal interposition for the profiler's signal. A program may
 * install its own handler for that signal after the profiler started (a
 * SIGPROF handler in main, a SIGALRM handler for alarm()). The profiler's
 * handler stays installed; the program's action is remembered, reported back
 * by sigaction exactly as the program set it, and every signal that is not
 * the profiler's own is handed to it with its mask and flags.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* The program's action for the profiler's signal, double-buffered so the
 * handler always reads a complete one while another thread writes. */
static struct sigaction program_actions[2];
static _Atomic int program_action_index;
static _Atomic int virtualized_signo;

static sigaction_fn resolve_real_sigaction(void) {
    static _Atomic(sigaction_fn) real;
    sigaction_fn found = atomic_load(&real);
    if (!found) {
        found = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        atomic_store(&real, found);
    }
    return found;
}

int ss_real_sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    sigaction_fn real = resolve_real_sigaction();
    if (!real) { errno = ENOSYS; return -1; }
    return real(signo, action, previous);
}

void ss_signal_hooks_take(int signo, const struct sigaction *program_action) {
    program_actions[0] = *program_action;
    atomic_store(&program_action_index, 0);
    atomic_store(&virtualized_signo, signo);
}

static void store_program_action(const struct sigaction *action) {
    int next = 1 - atomic_load(&program_action_index);
    program_actions[next] = *action;
    atomic_store(&program_action_index, next);
}

void ss_chain_to_program(int signo, siginfo_t *info, void *context) {
    struct sigaction action = program_actions[atomic_load(&program_action_index)];
    if (!(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_IGN) return;
    if (!(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_DFL) {
        /* The default action of the signals the profiler uses ends the
         * process: let it, as it would without the profiler. */
        struct sigaction fallback;
        memset(&fallback, 0, sizeof fallback);
        fallback.sa_handler = SIG_DFL;
        ss_real_sigaction(signo, &fallback, NULL);
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, signo);
        pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), signo);
        return;
    }
    sigset_t previous;
    int masked = !sigisemptyset(&action.sa_mask);
    if (masked) pthread_sigmask(SIG_BLOCK, &action.sa_mask, &previous);
    if (action.sa_flags & SA_RESETHAND) {
        struct sigaction reset;
        memset(&reset, 0, sizeof reset);
        reset.sa_handler = SIG_DFL;
        store_program_action(&reset);
    }
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signo, info, context);
    else
        action.sa_handler(signo);
    if (masked) pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

int sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    if (signo <= 0 || signo != atomic_load(&virtualized_signo)) return ss_real_sigaction(signo, action, previous);
    if (previous) *previous = program_actions[atomic_load(&program_action_index)];
    if (action) store_program_action(action);
    return 0;
}

sighandler_t signal(int signo, sighandler_t handler) {
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signo, &action, &previous) != 0) return SIG_ERR;
    return (previous.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))previous.sa_sigaction : previous.sa_handler;
}
