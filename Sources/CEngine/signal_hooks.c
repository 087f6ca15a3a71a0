/*
 * sigaction interposition for the signals the engine handles: its
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
#include <pthread.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

enum { VIRTUALIZED_CAPACITY = 4 };

/* The program's action for one signal, and the engine's own installed there.
 * Writers (sigaction calls, never signal context) hold `writing` with every
 * signal blocked on their thread; readers, handlers included, retry while
 * `version` is odd or changes under them, so they never see a torn action.
 * SA_RESETHAND is honoured by a flag the handler sets, so a handler never
 * writes the action. */
typedef struct {
    _Atomic int signo;
    _Atomic unsigned version;
    atomic_flag writing;
    _Atomic int reset_to_default;
    struct sigaction action;
    struct sigaction engine_action;
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

int ss_signal_is_virtualized(int signo) { return find_virtualized(signo) != NULL; }

static struct sigaction default_action(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    return action;
}

/* Enters the writers' section. Every signal is blocked on this thread first:
 * a handler run here while the version is odd would wait for this very
 * writer forever. */
static void begin_write(virtualized_signal *entry, sigset_t *saved_mask) {
    sigset_t all;
    sigfillset(&all);
    ss_real_sigmask(SIG_BLOCK, &all, saved_mask);
    while (atomic_flag_test_and_set_explicit(&entry->writing, memory_order_acquire)) {}
    atomic_fetch_add_explicit(&entry->version, 1, memory_order_acq_rel);
}

static void end_write(virtualized_signal *entry, const sigset_t *saved_mask) {
    atomic_fetch_add_explicit(&entry->version, 1, memory_order_acq_rel);
    atomic_flag_clear_explicit(&entry->writing, memory_order_release);
    ss_real_sigmask(SIG_SETMASK, saved_mask, NULL);
}

/* The kernel restarts a system call interrupted by a handled signal according
 * to the installed action's SA_RESTART, which is the engine's: it follows the
 * program's, so that a signal of the program's interrupts as it asked. With
 * no handler of the program's, system calls are restarted (our samples). */
static int restart_flag_for(const struct sigaction *program) {
    int handled = program->sa_handler != SIG_DFL && program->sa_handler != SIG_IGN;
    return handled ? program->sa_flags & SA_RESTART : SA_RESTART;
}

/* Reinstalls the engine's handler if the program's action asks for another SA_RESTART. */
static void follow_program_restart(virtualized_signal *entry) {
    int restart = restart_flag_for(&entry->action);
    if ((entry->engine_action.sa_flags & SA_RESTART) == restart) return;
    entry->engine_action.sa_flags ^= SA_RESTART;
    ss_real_sigaction(atomic_load(&entry->signo), &entry->engine_action, NULL);
}

static void store_program_action(virtualized_signal *entry, const struct sigaction *action) {
    sigset_t saved_mask;
    begin_write(entry, &saved_mask);
    entry->action = *action;
    atomic_store(&entry->reset_to_default, 0);
    follow_program_restart(entry);
    end_write(entry, &saved_mask);
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
    /* The kernel's SA_RESETHAND resets the handler alone; flags and mask stay. */
    if (atomic_load(&entry->reset_to_default)) action.sa_handler = SIG_DFL;
    return action;
}

/* A free entry for `signo`, holding the action installed there now, published
 * before the engine's handler replaces it: a signal arriving in between never
 * meets an empty remembered action. NULL when the table is full. */
static virtualized_signal *remember_installed_action(int signo) {
    for (int i = 0; i < VIRTUALIZED_CAPACITY; i++) {
        virtualized_signal *entry = &virtualized[i];
        if (atomic_load(&entry->signo) != 0) continue;
        if (ss_real_sigaction(signo, NULL, &entry->action) != 0) return NULL;
        atomic_store(&entry->signo, signo);
        return entry;
    }
    return NULL;
}

int ss_signal_take(int signo, void (*handler)(int, siginfo_t *, void *)) {
    virtualized_signal *entry = find_virtualized(signo);
    int fresh = entry == NULL;
    if (fresh) entry = remember_installed_action(signo);
    if (!entry) return -1;
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = handler;
    /* SA_ONSTACK: a SIGSEGV from a stack overflow can only be delivered on the
     * program's alternate stack, if it has one. */
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    /* Every asynchronous signal waits while the engine's handler runs, so that no
     * other handler can jump out of it half-way (a slot claimed but never
     * published would stop the reader). Faults stay deliverable. */
    sigfillset(&action.sa_mask);
    for (int fault = 0, faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP}; fault < 5; fault++)
        if (faults[fault] != signo) sigdelset(&action.sa_mask, faults[fault]);

    sigset_t saved_mask;
    unsigned published = atomic_load(&entry->version);
    begin_write(entry, &saved_mask);
    action.sa_flags |= restart_flag_for(&entry->action);
    entry->engine_action = action;
    int status = ss_real_sigaction(signo, &action, &previous);
    /* A sigaction of the program's that reached libc after the entry was
     * filled and before it was published is the program's latest word. */
    if (fresh && status == 0 && atomic_load(&entry->version) == published + 1) {
        entry->action = previous;
        follow_program_restart(entry);
    }
    end_write(entry, &saved_mask);
    return status;
}

SS_CHAIN_CODE void ss_chain_to_program(int signo, siginfo_t *info, void *context) {
    virtualized_signal *entry = find_virtualized(signo);
    struct sigaction action = entry ? load_program_action(entry) : default_action();
    /* The kernel compares the handler word alone, whatever SA_SIGINFO says. */
    if (action.sa_handler == SIG_IGN) return;
    if (action.sa_handler == SIG_DFL) {
        /* What the program would have met: the default action. A fault
         * raised by the kernel happens again on return, now to the default
         * action (same address, same core dump); anything else is re-sent. */
        struct sigaction fallback = default_action();
        ss_real_sigaction(signo, &fallback, NULL);
        if ((signo == SIGSEGV || signo == SIGBUS) && info && info->si_code > 0) return;
        sigset_t unblock;
        sigemptyset(&unblock);
        sigaddset(&unblock, signo);
        ss_real_sigmask(SIG_UNBLOCK, &unblock, NULL);
        syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), signo);
        return;
    }
    if ((action.sa_flags & SA_RESETHAND) && entry) atomic_store(&entry->reset_to_default, 1);
    /* The mask the kernel would have set for the program's handler: the
     * interrupted code's, plus its sa_mask, plus the signal unless SA_NODEFER. */
    sigset_t mask = ((const ucontext_t *)context)->uc_sigmask, previous;
    sigorset(&mask, &mask, &action.sa_mask);
    if (!(action.sa_flags & SA_NODEFER)) sigaddset(&mask, signo);
    ss_real_sigmask(SIG_SETMASK, &mask, &previous);
    if (action.sa_flags & SA_SIGINFO)
        action.sa_sigaction(signo, info, context);
    else
        action.sa_handler(signo);
    ss_real_sigmask(SIG_SETMASK, &previous, NULL);
}

int ss_program_handles_signal(int signo) {
    virtualized_signal *entry = find_virtualized(signo);
    if (!entry) return 0;
    struct sigaction action = load_program_action(entry);
    return action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

SS_INTERPOSER int sigaction(int signo, const struct sigaction *action, struct sigaction *previous) {
    virtualized_signal *entry = find_virtualized(signo);
    if (!entry) return ss_real_sigaction(signo, action, previous);
    /* Read before anything is locked, as libc reads it before the system call:
     * a bad pointer faults here, to the program's SIGSEGV action. */
    struct sigaction wanted;
    if (action) wanted = *action;
    if (previous) *previous = load_program_action(entry);
    if (action) store_program_action(entry, &wanted);
    return 0;
}

/* glibc's other name for sigaction, exported for old binaries and libraries. */
int __sigaction(int signo, const struct sigaction *action, struct sigaction *previous)
    __attribute__((alias("sigaction")));
