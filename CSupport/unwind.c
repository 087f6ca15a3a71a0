/*
 * libunwind, loaded privately. Listing libunwind.so.8 as a dependency would
 * put its _Unwind_* family into the process's global scope, ahead of libgcc's,
 * and every C++ exception in the target would then go through it. So it is
 * opened with RTLD_LOCAL and reached only through these pointers, resolved
 * once, before the first handler can run.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>

enum { UNW_CACHE_PER_THREAD_POLICY = 2 }; /* UNW_CACHE_PER_THREAD in libunwind-common.h */

typedef int (*backtrace_fn)(void **, int);
typedef int (*set_caching_policy_fn)(void *, int);

static backtrace_fn unwind_backtrace;

int ss_unwind_load(void) {
    if (unwind_backtrace) return SS_OK;
    void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!library) return SS_ERR_NO_UNWINDER;
    backtrace_fn backtrace = (backtrace_fn)dlsym(library, "unw_backtrace");
    set_caching_policy_fn set_policy = (set_caching_policy_fn)dlsym(library, "_ULx86_64_set_caching_policy");
    void **local_space = (void **)dlsym(library, "_ULx86_64_local_addr_space");
    if (!backtrace || !set_policy || !local_space) return SS_ERR_NO_UNWINDER;
    /* Not signal-safe: done once, before any handler is installed. */
    set_policy(*local_space, UNW_CACHE_PER_THREAD_POLICY);
    unwind_backtrace = backtrace;
    return SS_OK;
}

int ss_unwind_backtrace(void **frames, int capacity) {
    return unwind_backtrace ? unwind_backtrace(frames, capacity) : 0;
}
