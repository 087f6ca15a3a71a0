/*
 * Where each thread's stack ends, so that the handler knows the room it has before it walks
 * (handler.c), as it already does on an alternate signal stack. Learnt outside signal
 * context: a thread made through pthread_create notes its own bounds as it starts
 * (thread_hooks.c); the main thread's stack, which grows on demand, ends where
 * RLIMIT_STACK or the mapping below it (with the kernel's guard gap) stops its growth, found
 * from /proc/self/maps at the engine's start. Any other thread's is unknown (0): the handler
 * walks there as it did before it knew any bound.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

/* The kernel keeps this much (stack_guard_gap, 256 pages by default) between a growing
 * stack and the mapping below it. */
enum { GUARD_GAP_PAGES = 256 };

static SS_TLS uintptr_t tls_stack_low;
static _Atomic uintptr_t main_stack_low;
static _Atomic pid_t main_tid;

void ss_stack_note_current_thread(void) {
    pthread_attr_t attributes;
    if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
    void *low;
    size_t size;
    if (pthread_attr_getstack(&attributes, &low, &size) == 0) tls_stack_low = (uintptr_t)low;
    pthread_attr_destroy(&attributes);
}

void ss_stack_note_main_thread(void) {
    /* The calling thread's: /proc/self/maps is empty once the main thread has ended (pthread_exit). */
    FILE *maps = fopen("/proc/thread-self/maps", "re");
    if (!maps) return;
    struct rlimit limit;
    int limited = getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY;
    uintptr_t gap = (uintptr_t)GUARD_GAP_PAGES * (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t previous_end = 0, low = 0;
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, maps) > 0) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx", &start, &end) != 2) continue;
        if (!strstr(line, "[stack]")) {
            previous_end = end;
            continue;
        }
        low = previous_end + gap;
        if (limited && end > limit.rlim_cur && end - limit.rlim_cur > low) low = end - limit.rlim_cur;
        break;
    }
    free(line);
    fclose(maps);
    atomic_store(&main_stack_low, low);
    atomic_store(&main_tid, getpid());
}

uintptr_t ss_stack_low(void) {
    if (tls_stack_low) return tls_stack_low;
    if (ss_current_tid() == atomic_load_explicit(&main_tid, memory_order_relaxed))
        return atomic_load_explicit(&main_stack_low, memory_order_relaxed);
    return 0;
}
