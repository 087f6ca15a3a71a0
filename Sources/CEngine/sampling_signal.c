/*
 * The engine's signal: SIGPROF unless the program handles it, else a free real-time signal
 * (the summary says which); taken from the program (signal_hooks.c keeps the program's action,
 * to chain to), always run on the interrupted thread's own stack, and its number kept for the
 * engines (their timers and counters raise it) and the interposers.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

static int installed_signo;
static int signo_substituted;

/* A signal is free when nothing in the program handles it (or `handler` already does). */
static int signal_is_free(int signo, void (*handler)(int, siginfo_t *, void *)) {
    struct sigaction current;
    if (ss_real_sigaction(signo, NULL, &current) != 0) return 0;
    if (current.sa_flags & SA_SIGINFO) return current.sa_sigaction == handler;
    return current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN;
}

static int choose_signal(int preferred, void (*handler)(int, siginfo_t *, void *)) {
    if (signal_is_free(preferred, handler)) return preferred;
    for (int signo = SIGRTMIN + 4; signo <= SIGRTMAX - 4; signo++) {
        if (signal_is_free(signo, handler)) return signo;
    }
    return -1;
}

/* The sampling signal runs on the thread's own stack, never switching to an alternate
 * stack (a Rust thread's is 8 KiB, with the kernel's frame taking over 3 KB of it): a
 * thread is on its alternate stack only while in a handler of its own there, and then
 * the handler's room_to_walk decides. */
static int run_on_thread_stack(int signo) {
    struct sigaction installed;
    if (ss_real_sigaction(signo, NULL, &installed) != 0) return -1;
    installed.sa_flags &= ~SA_ONSTACK;
    return ss_real_sigaction(signo, &installed, NULL);
}

int ss_sampling_signal_take(int preferred_signo, void (*handler)(int, siginfo_t *, void *)) {
    int signo = choose_signal(preferred_signo, handler);
    if (signo < 0) return SS_ERR_NO_SIGNAL;
    if (ss_signal_take(signo, handler) != 0 || run_on_thread_stack(signo) != 0) return SS_ERR_NO_SIGNAL;
    installed_signo = signo;
    signo_substituted = signo != preferred_signo;
    return SS_OK;
}

int ss_engine_signal(void) { return installed_signo; }
int ss_engine_signal_substituted(void) { return signo_substituted; }
