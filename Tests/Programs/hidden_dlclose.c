/* Modules closed behind the profiler's back (issue 17.3): dlopens the plugin at argv[1],
 * calls it, and closes it through libc's own dlclose, found with dlsym in libc itself so
 * that no interposed dlclose sees it; argv[2] times (default 300), 10 ms of CPU before each close and about 10 ms after, in code outside every module. Prints `closed N`. */
#include "workload.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef unsigned long (*work_fn)(unsigned long);
static volatile uint64_t sink;

SAMPLED_FUNCTION static void use_plugin(work_fn work) {
    for (int i = 0; i < 2000; i++) sink += work(sink + (uint64_t)i);
}

/* Code in anonymous memory, in no module: an unwinder that meets it looks through every module
 * it is served, the closed one included. `mov ecx, N; 1: dec ecx; jnz 1b; ret`. */
typedef void (*spin_fn)(void);
static spin_fn anonymous_spin(unsigned iterations) {
    unsigned char code[] = {0xb9, 0, 0, 0, 0, 0xff, 0xc9, 0x75, 0xfc, 0xc3};
    memcpy(code + 1, &iterations, sizeof iterations);
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return NULL;
    memcpy(page, code, sizeof code);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) return NULL;
    return (spin_fn)page;
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
    spin_fn spin = anonymous_spin(20u * 1000 * 1000);
    if (!spin) return 4;
    int closed = 0;
    for (int i = 0; i < times; i++) {
        void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!plugin) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        use_plugin((work_fn)dlsym(plugin, "plugin_work"));
        sink += burn_cpu(0.01, 7); /* long enough for the profiler to list the module */
        if (libc_dlclose(plugin) == 0) closed++;
        spin(); /* about 10 ms, sampled while the profiler may still list the closed module */
    }
    printf("closed %d\n", closed);
    return 0;
}
