/*
 * Who the calling thread is: its kernel thread id and its process's id, kept where the handler
 * reads them without a system call (initial-exec TLS, a static), and whether it is excluded from
 * sampling (the profiler's own threads; a program thread while it runs the profiler's code).
 * Signal-safe, but for the naming of the profiler's own threads.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

SS_TLS int ss_tls_excluded;
static SS_TLS int32_t tls_tid;
static pid_t own_pid;

int32_t ss_current_tid(void) {
    if (!tls_tid) tls_tid = (int32_t)syscall(SYS_gettid);
    return tls_tid;
}

pid_t ss_own_pid(void) { return own_pid; }

void ss_identity_note_process(void) {
    tls_tid = 0;
    own_pid = getpid();
}

void ss_thread_exclude_current(void) { ss_tls_excluded = 1; }

void ss_thread_set_own_name(const char *name) { prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL); }

int ss_thread_set_excluded(int excluded) {
    int previous = ss_tls_excluded;
    ss_tls_excluded = excluded != 0;
    return previous;
}
