/* Which loaded module holds an address, as the loader knows it (dladdr): for the sampler
 * thread's checks outside signal context only (dladdr takes the loader's lock); and where a
 * module's code is, from its program headers. */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

uintptr_t ss_module_base_of(uintptr_t address, const char **path) {
    Dl_info info;
    if (!dladdr((const void *)address, &info) || !info.dli_fbase) return 0;
    if (path) *path = info.dli_fname;
    return (uintptr_t)info.dli_fbase;
}

uintptr_t ss_program_base(void) { return ss_module_base_of((uintptr_t)getauxval(AT_PHDR), NULL); }

size_t ss_module_code_segments(const struct dl_phdr_info *info, ss_code_range *out, size_t capacity) {
    size_t count = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X)) continue;
        uintptr_t low = info->dlpi_addr + segment->p_vaddr;
        if (count < capacity) out[count] = (ss_code_range){low, low + segment->p_memsz};
        count++;
    }
    return count;
}
