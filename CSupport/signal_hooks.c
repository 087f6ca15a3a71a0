/*
 * sigaction/signal interposition for the signals the engine handles: its
 * sampling signal, and SIGSEGV/SIGBUS (the guard that ends a sample whose
 * unwinding faulted). A program may install its own handler for any of them
 * after the profiler started (a SIGPROF handler in main, a crash reporter).
 * The engine's handler stays installed; the program's action is remembered,
 * reported back by sigaction exactly as the program set it, and every signal
 * that is not the engine's own is handed to it with its mask and flags.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

enum { VIRTUALIZED_CAPACITY = 4 };

/* The program's action for one signal, double-buffered so that a handler
 * always reads a complete one while another thread writes the other. */
typedef struct {
    _Atomic int signo;
    _Atomic int index;
    struct sigaction actions[2];
} virtualized_signal;

static virtualized_signal virtualized[VIRTUALIZED_CAPACITY];

static sigaction_fn resolve_real_sigaction(void) {
    static void *_Atomic real;
    return (sigaction_fn)ss_next_symbol("sigaction", &real);
}

int ss_real_sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    sigaction_fn real = resolve_real_sigaction();
    if (!real) { errno = ENOSYS; return -1; }
    return real(signo, action, previous);
}

static virtualized_signal *find_virtualized(int signo) {
    for (int i = 0; i < VIRTUALIZED_CAPACITY; i++)
        if (signo > 0 && atomic_load(&virtualized[i].signo) == signo) return &virtualized[i];
    return NULL;
}

int ss_signal_take(int signo, void (*handler)(int, siginfo_t *, void *), int extra_masked) {
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaddset(&action.sa_mask, signo);
    if (extra_masked > 0) sigaddset(&action.sa_mask, extra_masked);
    if (ss_real_sigaction(signo, &action, &previous) != 0) return -1;
    if (find_virtualized(signo)) return 0; /* taken before: the program's action is already remembered */
    for (int i = 0; i < VIRTUALIZED_CAPACITY; i++) {
        if (atomic_load(&virtualized[i].signo) == 0) {
            virtualized[i].actions[0] = previous;
            atomic_store(&virtualized[i].index, 0);
            atomic_store(&virtualized[i].signo, signo);
            return 0;
        }
    }
    return -1;
}

static void store_program_action(virtualized_signal *entry, const struct sigaction *action) {
    int next = 1 - atomic_load(&entry->index);
    entry->actions[next] = *action;
    atomic_store(&entry->index, next);
}

static struct sigaction default_action(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    return action;
}

void ss_chain_to_program(int signo, siginfo_t *info, void *context) {
    virtualized_signal *entry = find_virtualized(signo);
    struct sigaction action = entry ? entry->actions[atomic_load(&entry->index)] : default_action();
    if (!(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_IGN) return;
    if (!(action.sa_flags & SA_SIGINFO) && action.sa_handler == SIG_DFL) {
        /* What the program would have met: the default action. A fault
         * raised by the kernel happens again on return, now to the default
         * action (same address, same core dump); anything else is re-sent. */
        struct sigaction fallback = default_action();
        ss_real_sigaction(signo, &fallback, NULL);
        if ((signo == SIGSEGV || signo == SIGBUS) && info && info->si_code > 0) return;
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
    if ((action.sa_flags & SA_RESETHAND) && entry) {
        struct sigaction reset = default_action();
        store_program_action(entry, &reset);
    }
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signo, info, context);
    else
        action.sa_handler(signo);
    if (masked) pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

int sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    virtualized_signal *entry = find_virtualized(signo);
    if (!entry) return ss_real_sigaction(signo, action, previous);
    if (previous) *previous = entry->actions[atomic_load(&entry->index)];
    if (action) store_program_action(entry, action);
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
