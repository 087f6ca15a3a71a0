/*
 * libc's pthread_sigmask, past the engine's own interposer (mask_hooks.c), for the engine's own
 * changes of mask. Looked up as the library loads: a mask may be changed in a signal handler,
 * where the loader must not be entered.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>

static void *_Atomic real_pthread_sigmask;

__attribute__((constructor)) static void resolve_real_sigmask(void) {
    ss_next_symbol("pthread_sigmask", &real_pthread_sigmask);
}

int ss_real_sigmask(int how, const sigset_t *set, sigset_t *old) {
    __typeof__(&pthread_sigmask) function = ss_real_function("pthread_sigmask", &real_pthread_sigmask);
    return function ? function(how, set, old) : ENOSYS;
}
