/* Loads the file-format libraries privately, once each, and resolves their tables (file_format_libraries.h). */
#define _GNU_SOURCE
#include "file_format_libraries.h"

#include <dlfcn.h>
#include <pthread.h>

#define SS_RESOLVE(name) \
    if (!(table.name = (__typeof__(table.name))dlsym(library, #name))) return;

/* Defines ss_<kind>_load(), loading `file` and resolving `FUNCTIONS` into a table of `type`. */
#define SS_LIBRARY_LOADER(kind, type, file, FUNCTIONS)          \
    static type kind##_table;                                   \
    static const type *kind##_loaded;                           \
    static pthread_once_t kind##_once = PTHREAD_ONCE_INIT;      \
    static void kind##_resolve(void) {                          \
        void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);    \
        if (!library) return;                                   \
        type table;                                             \
        FUNCTIONS(SS_RESOLVE)                                   \
        kind##_table = table;                                   \
        kind##_loaded = &kind##_table;                          \
    }                                                           \
    const type *ss_##kind##_load(void) {                        \
        pthread_once(&kind##_once, kind##_resolve);             \
        return kind##_loaded;                                   \
    }

SS_LIBRARY_LOADER(libelf, ss_libelf, "libelf.so.1", SS_LIBELF_FUNCTIONS)
SS_LIBRARY_LOADER(libdw, ss_libdw, "libdw.so.1", SS_LIBDW_FUNCTIONS)
SS_LIBRARY_LOADER(liblzma, ss_liblzma, "liblzma.so.5", SS_LIBLZMA_FUNCTIONS)
SS_LIBRARY_LOADER(zlib, ss_zlib, "libz.so.1", SS_ZLIB_FUNCTIONS)
