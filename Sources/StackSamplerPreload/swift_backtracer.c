/*
 * The Swift runtime installs a crash backtracer (handlers on SIGSEGV, SIGBUS, SIGILL, SIGFPE,
 * SIGABRT, SIGTRAP, SIGQUIT) from a static constructor of libswiftCore, reading SWIFT_BACKTRACE
 * as it runs (stdlib/public/runtime/Backtrace.cpp, BacktraceInitializer). Loading the Swift part
 * into a program that has no Swift runtime of its own would change how that program crashes.
 * So for that one dlopen the environment says SWIFT_BACKTRACE=enable=no: `environ` points at a
 * copy with that entry for the duration of the load, and then at the program's own array again,
 * strings and order untouched. A Swift program keeps its runtime and its backtracer as they were.
 * From the constructor only one thread exists. From the C API, another thread's setenv during
 * the load would be lost (as with any setenv racing another): the load takes a few milliseconds
 * once per process.
 */
#define _GNU_SOURCE
#include "preload_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static const char backtracer_variable[] = "SWIFT_BACKTRACE=";
static char backtracer_off[] = "SWIFT_BACKTRACE=enable=no";

/* Whether libswiftCore.so is among the loaded objects (the program's own runtime). Walks the
 * loader's list rather than asking dlopen(RTLD_NOLOAD), which searches the file system first. */
static int swift_runtime_loaded(void) {
    struct link_map *object = NULL;
    void *program = dlopen(NULL, RTLD_LAZY);
    if (!program || dlinfo(program, RTLD_DI_LINKMAP, &object) != 0) return 0;
    for (; object; object = object->l_next) {
        const char *slash = object->l_name ? strrchr(object->l_name, '/') : NULL;
        if (slash && strcmp(slash + 1, "libswiftCore.so") == 0) return 1;
    }
    return 0;
}

void *ss_dlopen_without_swift_backtracer(const char *path) {
    if (swift_runtime_loaded()) return dlopen(path, SS_SWIFT_PART_DLOPEN_MODE);
    size_t count = 0;
    while (environ && environ[count]) count++;
    char **edited = malloc((count + 2) * sizeof *edited);
    if (!edited) return NULL;
    size_t kept = 0;
    edited[kept++] = backtracer_off;
    for (size_t i = 0; i < count; i++)
        if (strncmp(environ[i], backtracer_variable, sizeof backtracer_variable - 1) != 0) edited[kept++] = environ[i];
    edited[kept] = NULL;
    char **original = environ;
    environ = edited;
    void *library = dlopen(path, SS_SWIFT_PART_DLOPEN_MODE);
    environ = original;
    free(edited);
    return library;
}
