/*
 * sigaction/signal interposition for the signals the engine handles: its
 * sampling signal, and SIGSEGV/SIGBUS (the guard that ends a sample whose
 * unwinding faulted). A program may install its own handler for any of them
 * after the profiler started (a SIGPROF handler in main, a crash reporter).
 * The engine's handler stays installed; the program's action is remembered,
 * reported back by sigaction exactly as the program set it, and every signal
 * that is not the engine's own is handed to it with the mask and flags the
 * kernel would have applied.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

enum { VIRTUALIZED_CAPACITY = 4 };

/* The program's action for one signal. Writers (sigaction calls, never signal
 * context) take `writing`; readers, handlers included, retry while `version`
 * is odd or changes under them, so they never see a torn action. SA_RESETHAND
 * is honoured by a flag the handler sets, so a handler never writes the action. */
typedef struct {
    _Atomic int signo;
    _Atomic unsigned version;
    atomic_flag writing;
    _Atomic int reset_to_default;
    struct sigaction action;
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

static struct sigaction default_action(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    return action;
}

static void store_program_action(virtualized_signal *entry, const struct sigaction *action) {
    while (atomic_flag_test_and_set_explicit(&entry->writing, memory_order_acquire)) {}
    atomic_fetch_add_explicit(&entry->version, 1, memory_order_acq_rel);
    entry->action = *action;
    atomic_store(&entry->reset_to_default, 0);
    atomic_fetch_add_explicit(&entry->version, 1, memory_order_acq_rel);
    atomic_flag_clear_explicit(&entry->writing, memory_order_release);
}

static struct sigaction load_program_action(virtualized_signal *entry) {
    struct sigaction action;
    for (;;) {
        unsigned before = atomic_load_explicit(&entry->version, memory_order_acquire);
        if (before & 1) continue;
        action = entry->action;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&entry->version, memory_order_relaxed) == before) break;
    }
    return atomic_load(&entry->reset_to_default) ? default_action() : action;
}

int ss_signal_take(int signo, void (*handler)(int, siginfo_t *, void *)) {
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    /* SA_ONSTACK: a SIGSEGV from a stack overflow can only be delivered on the
     * program's alternate stack, if it has one. */
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    /* Every asynchronous signal waits while the engine's handler runs, so that no
     * other handler can jump out of it half-way (a slot claimed but never
     * published would stop the reader). Faults stay deliverable. */
    sigfillset(&action.sa_mask);
    for (int fault = 0, faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}; fault < 5; fault++)
        if (faults[fault] != signo) sigdelset(&action.sa_mask, faults[fault]);
    if (ss_real_sigaction(signo, &action, &previous) != 0) return -1;
    if (find_virtualized(signo)) return 0; /* taken before: the program's action is already remembered */
    for (int i = 0; i < VIRTUALIZED_CAPACITY; i++) {
        if (atomic_load(&virtualized[i].signo) == 0) {
            virtualized[i].action = previous;
            atomic_store(&virtualized[i].signo, signo);
            return 0;
        }
    }
    return -1;
}

void ss_chain_to_program(int signo, siginfo_t *info, void *context) {
    virtualized_signal *entry = find_virtualized(signo);
    struct sigaction action = entry ? load_program_action(entry) : default_action();
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
    if ((action.sa_flags & SA_RESETHAND) && entry) atomic_store(&entry->reset_to_default, 1);
    /* The mask the kernel would have set for the program's handler: the
     * interrupted code's, plus its sa_mask, plus the signal unless SA_NODEFER. */
    sigset_t mask = ((const ucontext_t *)context)->uc_sigmask, previous;
    sigorset(&mask, &mask, &action.sa_mask);
    if (!(action.sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
    pthread_sigmask(SIG_SETMASK, &mask, &previous);
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signo, info, context);
    else
        action.sa_handler(signo);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

int sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    virtualized_signal *entry = find_virtualized(signo);
    if (!entry) return ss_real_sigaction(signo, action, previous);
    if (previous) *previous = load_program_action(entry);
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
