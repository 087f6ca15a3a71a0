/* Loads libmicrohttpd privately, once, and resolves its table (microhttpd_library.h). */
#define _GNU_SOURCE
#include "microhttpd_library.h"

#include <dlfcn.h>
#include <pthread.h>

static ss_libmicrohttpd table;
static const ss_libmicrohttpd *loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SS_RESOLVE(name) \
    if (!(resolved.name = (__typeof__(resolved.name))dlsym(library, #name))) return;

static void resolve(void) {
    void *library = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    ss_libmicrohttpd resolved;
    SS_LIBMICROHTTPD_FUNCTIONS(SS_RESOLVE)
    table = resolved;
    loaded = &table;
}

const ss_libmicrohttpd *ss_libmicrohttpd_load(void) {
    pthread_once(&once, resolve);
    return loaded;
}
