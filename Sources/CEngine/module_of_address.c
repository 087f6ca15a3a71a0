/* Which loaded module holds an address, as the loader knows it (dladdr): for the sampler
 * thread's checks outside signal context only (dladdr takes the loader's lock). */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>
#include <sys/auxv.h>

uintptr_t ss_module_base_of(uintptr_t address, const char **path) {
    Dl_info info;
    if (!dladdr((const void *)address, &info) || !info.dli_fbase) return 0;
    if (path) *path = info.dli_fname;
    return (uintptr_t)info.dli_fbase;
}

uintptr_t ss_program_base(void) { return ss_module_base_of((uintptr_t)getauxval(AT_PHDR), NULL); }
