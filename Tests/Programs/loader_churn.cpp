/* loader_churn: the loader-lock hazard. First, on the main thread alone, argv[1] calls of
 * dl_iterate_phdr that take and drop a handle on a loaded module inside the callback
 * (dlopen RTLD_NOLOAD, dlclose, with the loader's lock held). Then for argv[1] rounds,
 * three threads at once: one dlopens and dlcloses the library argv[2] (calling into it),
 * one throws and catches C++ exceptions (the unwinder walks the loader's module list), one
 * calls dl_iterate_phdr; the main thread waits. (The first part is not run beside the
 * others: glibc itself can deadlock when one thread dlcloses inside a dl_iterate_phdr
 * callback while another dlcloses.) A profiler that takes the loader's lock in its
 * signal handler, or in a dlclose it interposes, can deadlock here. Prints
 * `closes_in_callback N`, `dlopen N`, `exceptions N`, `iterations N` (all fixed by
 * argv[1]) and exits 0.
 * Under StackSampler (its ss_module_cache_generation found with dlsym, and nonzero) it first prints
 * `dlclose_refresh_us N`: over three dlopen/dlclose pairs, the longest time from dlclose
 * returning until the engine's copy of the module list had changed (2 s at most).
 * Build: g++ -O2 -pthread -o loader_churn loader_churn.cpp -ldl */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <unistd.h>

static long rounds = 2000;

static long now_us() {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000L + now.tv_nsec / 1000;
}
static const char *library;
static volatile unsigned long sink;

static void *open_and_close(void *) {
    long opened = 0;
    for (long i = 0; i < rounds; i++) {
        void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!handle) { std::fprintf(stderr, "dlopen %s: %s\n", library, dlerror()); std::exit(2); }
        auto function = reinterpret_cast<unsigned long (*)(unsigned long)>(dlsym(handle, "plugin_work"));
        if (function) sink += function(i);
        dlclose(handle);
        opened++;
    }
    return reinterpret_cast<void *>(opened);
}

__attribute__((noinline)) static void thrower(long i) {
    if (i >= 0) throw std::runtime_error("round");
}

static void *throw_and_catch(void *) {
    long caught = 0;
    for (long i = 0; i < rounds * 10; i++) {
        try { thrower(i); } catch (const std::exception &) { caught++; }
    }
    return reinterpret_cast<void *>(caught);
}

static int count_module(struct dl_phdr_info *, size_t, void *data) {
    ++*static_cast<long *>(data);
    return 0;
}

/* Takes and drops a handle on the first named module, inside the iteration. */
static int close_inside(struct dl_phdr_info *info, size_t, void *data) {
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    void *handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle && dlclose(handle) == 0) ++*static_cast<long *>(data);
    return 1;
}

static void *iterate_modules(void *) {
    long calls = 0;
    for (long i = 0; i < rounds * 10; i++) {
        long modules = 0;
        dl_iterate_phdr(count_module, &modules);
        if (modules > 0) calls++;
    }
    return reinterpret_cast<void *>(calls);
}

int main(int argc, char **argv) {
    if (argc < 3) { std::fprintf(stderr, "usage: loader_churn ROUNDS LIBRARY\n"); return 2; }
    rounds = std::atol(argv[1]);
    library = argv[2];
    auto generation = reinterpret_cast<unsigned long long (*)()>(dlsym(RTLD_DEFAULT, "ss_module_cache_generation"));
    if (generation && generation() > 0) { /* the engine made its first copy: it is sampling */
        long longest_us = 0;
        for (int pair = 0; pair < 3; pair++) {
            const unsigned long long before = generation();
            void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
            if (!handle) { std::fprintf(stderr, "dlopen %s: %s\n", library, dlerror()); return 2; }
            dlclose(handle);
            const long start = now_us();
            while (generation() == before && now_us() - start < 2000000) usleep(100);
            longest_us = std::max(longest_us, now_us() - start);
        }
        std::printf("dlclose_refresh_us %ld\n", longest_us);
    }
    long closes = 0;
    for (long i = 0; i < rounds; i++) dl_iterate_phdr(close_inside, &closes);
    std::printf("closes_in_callback %ld\n", closes);
    pthread_t threads[3];
    void *(*bodies[3])(void *) = {open_and_close, throw_and_catch, iterate_modules};
    for (int i = 0; i < 3; i++) pthread_create(&threads[i], nullptr, bodies[i], nullptr);
    void *results[3];
    for (int i = 0; i < 3; i++) pthread_join(threads[i], &results[i]);
    std::printf("dlopen %ld\nexceptions %ld\niterations %ld\n", reinterpret_cast<long>(results[0]),
                reinterpret_cast<long>(results[1]), reinterpret_cast<long>(results[2]));
    return 0;
}
