/* Modules closed behind the profiler's back (issue 17.3): dlopens the plugin at argv[1],
 * calls it, and closes it through libc's own dlclose, found with dlsym in libc itself so
 * that no interposed dlclose sees it; argv[2] times (default 300). Prints `closed N`. */
#include "workload.h"
#include <dlfcn.h>
#include <stdio.h>

typedef unsigned long (*work_fn)(unsigned long);
static volatile uint64_t sink;

SAMPLED_FUNCTION static void use_plugin(work_fn work) {
    for (int i = 0; i < 2000; i++) sink += work(sink + (uint64_t)i);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hidden_dlclose PLUGIN [TIMES]\n");
        return 2;
    }
    int times = argc > 2 ? atoi(argv[2]) : 300;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    int (*libc_dlclose)(void *) = libc ? (int (*)(void *))dlsym(libc, "dlclose") : NULL;
    if (!libc_dlclose) {
        fprintf(stderr, "libc's dlclose not found\n");
        return 3;
    }
    int closed = 0;
    for (int i = 0; i < times; i++) {
        void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!plugin) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        use_plugin((work_fn)dlsym(plugin, "plugin_work"));
        if (libc_dlclose(plugin) == 0) closed++;
        sink += burn_cpu(0.003, 11); /* sampled while the profiler may still list the closed module */
    }
    printf("closed %d\n", closed);
    return 0;
}
