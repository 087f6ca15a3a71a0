/*
 * The loader lock. libunwind finds unwind tables with dl_iterate_phdr, which
 * takes the loader's lock: a sample landing while a thread is in dlopen,
 * dlclose or exception unwinding could deadlock there. While a thread is in
 * the engine's handler, dl_iterate_phdr (interposed) serves a copy of the
 * module list instead, taken by the sampler thread outside signal context and
 * refreshed when the loader's add/remove counters move. Every other caller
 * gets the real dl_iterate_phdr.
 *
 * Two buffers: a refresh writes only the one not published, and only once
 * no handler still reads it; a handler announces itself as a reader, then
 * checks the buffer is still the published one, so it never waits.
 *
 * Only the sampler thread refreshes. dlclose is interposed to wake it at once,
 * so that handlers do not go on reading the tables of unmapped code until its
 * next tick. The caller of dlclose does not refresh itself: it may hold the
 * loader's lock (dlclose inside a dl_iterate_phdr callback) or a lock of its
 * own that a callback needs, and a refresh takes the loader's lock. (dlopen
 * is not interposed: the loader resolves a dlopen's RUNPATH and $ORIGIN from
 * its caller, which an interposer would replace.)
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <link.h>
#include <sched.h>

typedef int (*phdr_callback)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback, void *);

enum { MODULE_CAPACITY = 2048 };

typedef struct {
    struct dl_phdr_info entries[MODULE_CAPACITY];
    size_t count;
} module_list;

static module_list lists[2];
static _Atomic int published = -1;
static _Atomic int readers[2];
static unsigned long long cached_adds = ~0ull, cached_subs = ~0ull;
static _Atomic uint64_t generation;

SS_TLS int ss_tls_in_handler;

static dl_iterate_phdr_fn real_dl_iterate_phdr(void) {
    static void *_Atomic real;
    return (dl_iterate_phdr_fn)ss_next_symbol("dl_iterate_phdr", &real);
}

typedef struct {
    unsigned long long adds, subs;
} loader_counters;

static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
    loader_counters *counters = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        counters->adds = info->dlpi_adds;
        counters->subs = info->dlpi_subs;
    }
    return 1;
}

static int copy_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    module_list *list = data;
    if (list->count == MODULE_CAPACITY) return 1; /* the rest are not served in the handler */
    list->entries[list->count++] = *info;
    return 0;
}

void ss_module_cache_refresh(void) {
    dl_iterate_phdr_fn real = real_dl_iterate_phdr();
    if (!real) return;
    loader_counters counters = {0, 0};
    real(read_counters, &counters);
    if (counters.adds == cached_adds && counters.subs == cached_subs) return;
    int target = atomic_load(&published) == 0 ? 1 : 0;
    while (atomic_load(&readers[target]) != 0) sched_yield();
    lists[target].count = 0;
    real(copy_module, &lists[target]);
    atomic_store(&published, target);
    atomic_fetch_add(&generation, 1);
    cached_adds = counters.adds;
    cached_subs = counters.subs;
}

void ss_module_cache_reset_after_fork(void) {
    /* A thread of the parent may have been reading a list at fork(): it does not exist here. */
    atomic_store(&readers[0], 0);
    atomic_store(&readers[1], 0);
}

int dlclose(void *handle) {
    static void *_Atomic real;
    int (*real_dlclose)(void *) = (int (*)(void *))ss_next_symbol("dlclose", &real);
    if (!real_dlclose) return -1;
    int result = real_dlclose(handle);
    /* Only once the engine has a copy to keep current (it made the first one at init). */
    if (atomic_load(&published) >= 0) ss_sampler_request_refresh();
    return result;
}

uint64_t ss_module_cache_generation(void) { return atomic_load(&generation); }

int dl_iterate_phdr(phdr_callback callback, void *data) {
    if (ss_tls_in_handler) {
        for (;;) {
            int index = atomic_load(&published);
            if (index < 0) break;
            atomic_fetch_add(&readers[index], 1);
            if (atomic_load(&published) != index) {
                atomic_fetch_sub(&readers[index], 1);
                continue;
            }
            int result = 0;
            const module_list *list = &lists[index];
            for (size_t i = 0; i < list->count && result == 0; i++) {
                struct dl_phdr_info copy = list->entries[i];
                result = callback(&copy, sizeof copy, data);
            }
            atomic_fetch_sub(&readers[index], 1);
            return result;
        }
    }
    dl_iterate_phdr_fn real = real_dl_iterate_phdr();
    return real ? real(callback, data) : 0;
}
