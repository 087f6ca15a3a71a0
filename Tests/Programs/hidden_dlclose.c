/* Modules closed behind the profiler's back: dlopens the plugin at argv[1],
 * calls it, keeps it open for 150 ms of CPU (longer than any refresh interval a profiler's
 * module list could have), and closes it through libc's own dlclose, found with dlsym in libc
 * itself so that no interposed dlclose sees it; then runs about 10 ms of code in anonymous
 * memory, while three more threads run such code all the time: an unwinder that meets it looks
 * through every module it knows, the closed one included. A handler that read the closed
 * module's program headers killed the program (SIGSEGV) in 3 runs of 3, 10 closes each.
 * argv[2] times (default 6). Prints `closed N`. */
#include "workload.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
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

enum { SPINNERS = 3 };
static atomic_int finished;

/* Runs anonymous code until main is done, so that samples land outside every module at any
 * moment, also in the instant after a close, while the profiler's sampler thread (with these
 * threads and main on 2 cores) is slow to notice the close. */
static void *spinner(void *argument) {
    spin_fn spin = (spin_fn)argument;
    while (!atomic_load(&finished)) spin();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hidden_dlclose PLUGIN [TIMES]\n");
        return 2;
    }
    int times = argc > 2 ? atoi(argv[2]) : 6;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    int (*libc_dlclose)(void *) = libc ? (int (*)(void *))dlsym(libc, "dlclose") : NULL;
    if (!libc_dlclose) {
        fprintf(stderr, "libc's dlclose not found\n");
        return 3;
    }
    spin_fn spin = anonymous_spin(20u * 1000 * 1000);
    if (!spin) return 4;
    spin_fn short_spin = anonymous_spin(200u * 1000);
    if (!short_spin) return 4;
    pthread_t spinners[SPINNERS];
    for (int i = 0; i < SPINNERS; i++) pthread_create(&spinners[i], NULL, spinner, (void *)short_spin);
    int closed = 0;
    for (int i = 0; i < times; i++) {
        void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!plugin) { fprintf(stderr, "%s\n", dlerror()); return 1; }
        use_plugin((work_fn)dlsym(plugin, "plugin_work"));
        sink += burn_cpu(0.15, 7); /* long enough for any profiler to list the module */
        if (libc_dlclose(plugin) == 0) closed++;
        spin(); /* about 10 ms, sampled while the profiler may still list the closed module */
    }
    atomic_store(&finished, 1);
    for (int i = 0; i < SPINNERS; i++) pthread_join(spinners[i], NULL);
    printf("closed %d\n", closed);
    return 0;
}
