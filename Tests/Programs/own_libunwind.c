/* A program that uses libunwind itself: dlopens libunwind.so.8 (the same
 * instance the profiler would share, had it one) and, on one thread, flushes its cache and
 * calls unw_backtrace through a realigned frame (libunwind's slow path: its global cache lock
 * held across dl_iterate_phdr) while another thread runs dl_iterate_phdr callbacks, realigned
 * too, that burn CPU with the loader's lock held. A profiler whose handler unwinds with that
 * libunwind deadlocks here in about 4 runs of 10 (most often early in the run).
 * Prints `backtraces N`, `iterations N`, then `done`. argv[1]: rounds (default 2000). */
#include "workload.h"
#include <alloca.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>

typedef int (*backtrace_fn)(void **, int);
typedef void (*flush_cache_fn)(void *, uintptr_t, uintptr_t);

static int rounds = 2000;
static backtrace_fn unwind_backtrace;
static flush_cache_fn flush_cache;
static void *local_address_space;
static volatile uint64_t sink;

/* A frame that realigns the stack through a register (an over-aligned local beside alloca): its
 * CFA is a DWARF expression, which libunwind's fast trace cannot follow, so every walk through it
 * takes libunwind's slow path, the one that holds its cache lock across dl_iterate_phdr. */
#define REALIGNED_FRAME(bytes) \
    char aligned_local[64] __attribute__((aligned(64))); \
    char *scratch = alloca(bytes); \
    __asm__ volatile("" : : "r"(aligned_local), "r"(scratch) : "memory")

SAMPLED_FUNCTION static int take_backtrace(size_t scratch_bytes) {
    REALIGNED_FRAME(scratch_bytes);
    void *frames[64];
    return unwind_backtrace(frames, 64);
}

SAMPLED_FUNCTION static void *backtracer(void *argument) {
    (void)argument;
    long total = 0;
    for (int i = 0; i < rounds; i++) {
        flush_cache(local_address_space, 0, 0);
        if (take_backtrace(sizeof(void *)) > 0) total++;
        sink += burn_cpu(0.00002, 5);
    }
    printf("backtraces %ld\n", total);
    return NULL;
}

SAMPLED_FUNCTION static int busy_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)data;
    REALIGNED_FRAME(size);
    sink += info->dlpi_addr + burn_cpu(0.00002, 9);
    return 0;
}

SAMPLED_FUNCTION static void *iterator(void *argument) {
    (void)argument;
    long total = 0;
    for (int i = 0; i < rounds; i++) {
        dl_iterate_phdr(busy_callback, NULL);
        total++;
    }
    printf("iterations %ld\n", total);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atoi(argv[1]);
    void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    void **address_space = library ? dlsym(library, "_ULx86_64_local_addr_space") : NULL;
    unwind_backtrace = library ? (backtrace_fn)dlsym(library, "unw_backtrace") : NULL;
    flush_cache = library ? (flush_cache_fn)dlsym(library, "_Ux86_64_flush_cache") : NULL;
    if (!address_space || !unwind_backtrace || !flush_cache) {
        fprintf(stderr, "libunwind.so.8: %s\n", dlerror());
        return 3;
    }
    local_address_space = *address_space;
    pthread_t threads[2];
    pthread_create(&threads[0], NULL, backtracer, NULL);
    pthread_create(&threads[1], NULL, iterator, NULL);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    printf("done\n");
    return 0;
}
