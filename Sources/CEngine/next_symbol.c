/* The real functions behind the engine's interpositions (pthread_create,
 * sigaction, dl_iterate_phdr): the next definition after this library's. */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>
#include <errno.h>

void *ss_next_symbol(const char *name, void *_Atomic *cache) {
    void *found = atomic_load(cache);
    if (!found) {
        found = dlsym(RTLD_NEXT, name);
        atomic_store(cache, found);
    }
    return found;
}

void *ss_real_function(const char *name, void *_Atomic *cache) {
    void *function = ss_next_symbol(name, cache);
    if (!function) errno = ENOSYS;
    return function;
}
