/* Loads a library privately, once, and fills its table (private_library.h). */
#define _GNU_SOURCE
#include "private_library.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Opens the library and fills its table; returns 1, or 0 with `error` saying why. The library
 * stays loaded whatever the outcome (a library's destructors are not run behind its users). */
static int resolve(ss_private_library *library) {
    void *handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(library->error, sizeof library->error, "cannot load %s (%s); install Debian's %s", library->file,
                 why ? why : "not found", library->package);
        return 0;
    }
    for (size_t i = 0; i < library->count; i++) {
        void *function = dlsym(handle, library->names[i]);
        if (!function) {
            snprintf(library->error, sizeof library->error, "%s has no %s (too old?)", library->file,
                     library->names[i]);
            return 0;
        }
        /* The table is `count` function pointers, which POSIX has the size and form of void *. */
        memcpy((char *)library->table + i * sizeof function, &function, sizeof function);
    }
    const char *refusal = library->initialize ? library->initialize(library->table) : NULL;
    if (refusal) {
        snprintf(library->error, sizeof library->error, "%s did not initialize: %s", library->file, refusal);
        return 0;
    }
    return 1;
}

const void *ss_private_library_load(ss_private_library *library) {
    if (!atomic_load_explicit(&library->settled, memory_order_acquire)) {
        pthread_mutex_lock(&library->lock);
        if (!atomic_load_explicit(&library->settled, memory_order_relaxed)) {
            library->loaded = resolve(library);
            atomic_store_explicit(&library->settled, 1, memory_order_release);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return library->loaded ? library->table : NULL;
}

const char *ss_private_library_error(ss_private_library *library) {
    ss_private_library_load(library);
    return library->error;
}
