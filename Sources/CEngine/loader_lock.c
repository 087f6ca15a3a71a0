/*
 * The loader's write lock, as a forked child finds it.
 *
 * glibc's fork (2.36) resets the loader's main lock (dl_load_lock) and its TLS
 * lock in the child, but not dl_load_write_lock, which dl_iterate_phdr takes, as
 * do dlopen and dlclose while they change the list of modules. It is a recursive
 * mutex: held at the fork by any thread of the parent, even the forking one, its
 * owner is a thread the child does not have, so in the child it stays held for
 * ever, and every dl_iterate_phdr, dlopen of a new module or dlclose there waits
 * for ever. A child's session needs the loader's list (module tables, and the
 * symbol libraries it loads to name the profile), so the child starts one only
 * once it knows that lock is free: only the forking thread exists then, so the
 * state seen is the state at the fork, and a lock free then is one no other
 * thread holds.
 *
 * glibc does not export the lock. It lies in the loader's `_rtld_global`, whose
 * layout changes between versions, so the engine finds it by looking: inside a
 * dl_iterate_phdr callback, the only recursive mutex of `_rtld_global` that the
 * calling thread holds, and holds neither before nor after, is that lock. Where it cannot be found,
 * a child is not profiled (it cannot be known safe), and says so.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

typedef int (*phdr_callback)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback, void *);

/* Largest `_rtld_global` searched (4336 bytes in glibc 2.36). */
enum { SEARCHED_BYTES_MAX = 65536 };

static const pthread_mutex_t *write_lock;

/* What the search compares: `_rtld_global` before and inside the callback. */
typedef struct {
    const unsigned char *global;
    size_t size;
    unsigned char *inside;
} search;

static int copy_inside(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info;
    (void)size;
    search *state = data;
    memcpy(state->inside, state->global, state->size);
    return 1;
}

static int is_recursive(const pthread_mutex_t *mutex) {
    return (mutex->__data.__kind & 0x7f) == PTHREAD_MUTEX_RECURSIVE_NP;
}

void ss_loader_lock_locate(void) {
    static void *_Atomic real_symbol;
    dl_iterate_phdr_fn real = (dl_iterate_phdr_fn)ss_next_symbol("dl_iterate_phdr", &real_symbol);
    void *global = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *symbol = NULL;
    if (!real || !global || !dladdr1(global, &info, (void **)&symbol, RTLD_DL_SYMENT) || !symbol) return;
    size_t size = symbol->st_size;
    if (size < sizeof(pthread_mutex_t) || size > SEARCHED_BYTES_MAX) return;
    static unsigned char before[SEARCHED_BYTES_MAX], inside[SEARCHED_BYTES_MAX]; /* once, at the first start */
    memcpy(before, global, size);
    search state = {global, size, inside};
    real(copy_inside, &state);
    int tid = ss_current_tid();
    const pthread_mutex_t *found = NULL;
    size_t step = _Alignof(pthread_mutex_t);
    for (size_t offset = 0; offset + sizeof(pthread_mutex_t) <= size; offset += step) {
        const pthread_mutex_t *was = (const pthread_mutex_t *)(before + offset);
        const pthread_mutex_t *held = (const pthread_mutex_t *)(inside + offset);
        const pthread_mutex_t *now = (const pthread_mutex_t *)((const unsigned char *)global + offset);
        if (!is_recursive(held) || held->__data.__owner != tid || held->__data.__lock == 0) continue;
        /* Another thread may hold it before or after (in a process with threads running). */
        if (was->__data.__owner == tid || now->__data.__owner == tid) continue;
        if (found) return; /* two candidates: not known which */
        found = now;
    }
    write_lock = found;
}

ss_loader_lock_state ss_loader_lock_state_now(void) {
    if (!write_lock) return SS_LOADER_LOCK_UNKNOWN;
    return __atomic_load_n(&write_lock->__data.__lock, __ATOMIC_ACQUIRE) == 0 ? SS_LOADER_LOCK_FREE : SS_LOADER_LOCK_HELD;
}
