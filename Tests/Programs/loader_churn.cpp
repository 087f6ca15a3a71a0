/* loader_churn: the loader-lock hazard. For argv[1] rounds, three threads at once:
 * one dlopens and dlcloses the library argv[2] (calling into it), one throws and
 * catches C++ exceptions (the unwinder walks the loader's module list), one calls
 * dl_iterate_phdr; the main thread spins. A profiler that takes the loader's lock
 * in its signal handler can deadlock here. Prints `dlopen N`, `exceptions N`,
 * `iterations N` (all fixed by argv[1]) and exits 0.
 * Under StackSampler (its ss_module_cache_generation found with dlsym) it first prints
 * `dlclose_refreshes N`: how often the engine's copy of the module list changed across one
 * dlopen/dlclose pair, read at once after dlclose (before the sampler thread could wake).
 * Build: g++ -O2 -pthread -o loader_churn loader_churn.cpp -ldl */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

static long rounds = 2000;
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
    if (generation) {
        const unsigned long long before = generation();
        void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!handle) { std::fprintf(stderr, "dlopen %s: %s\n", library, dlerror()); return 2; }
        dlclose(handle);
        std::printf("dlclose_refreshes %llu\n", generation() - before);
    }
    pthread_t threads[3];
    void *(*bodies[3])(void *) = {open_and_close, throw_and_catch, iterate_modules};
    for (int i = 0; i < 3; i++) pthread_create(&threads[i], nullptr, bodies[i], nullptr);
    void *results[3];
    for (int i = 0; i < 3; i++) pthread_join(threads[i], &results[i]);
    std::printf("dlopen %ld\nexceptions %ld\niterations %ld\n", reinterpret_cast<long>(results[0]),
                reinterpret_cast<long>(results[1]), reinterpret_cast<long>(results[2]));
    return 0;
}
