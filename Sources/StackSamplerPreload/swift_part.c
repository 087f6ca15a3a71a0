/*
 * Loads the Swift part (sampler, symbols, exporters) from the preload library's own directory,
 * privately (RTLD_LOCAL: its symbols stay out of the program's scope). Its references to the
 * engine (ss_*) bind to this library's definitions, so a process has one engine.
 */
#define _GNU_SOURCE
#include "preload_internal.h"
#include "preload_swift_part.h"
#include "stacksampler_engine_c.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

static ss_swift_part part;
static const ss_swift_part *loaded;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* The Swift part's path: this library's directory, then its file name. 0 if it does not fit. */
static int swift_part_path(char *path, size_t capacity) {
    Dl_info self;
    if (!dladdr((void *)ss_swift_part_load, &self) || !self.dli_fname) return 0;
    const char *slash = strrchr(self.dli_fname, '/');
    size_t directory = slash ? (size_t)(slash - self.dli_fname + 1) : 0;
    if (directory + sizeof STACKSAMPLER_SWIFT_PART_FILE > capacity) return 0;
    memcpy(path, self.dli_fname, directory);
    memcpy(path + directory, STACKSAMPLER_SWIFT_PART_FILE, sizeof STACKSAMPLER_SWIFT_PART_FILE);
    return 1;
}

static void load(void) {
    char path[PATH_MAX];
    if (!swift_part_path(path, sizeof path)) {
        ss_report("cannot locate ", STACKSAMPLER_SWIFT_PART_FILE, " beside the preload library; not profiling");
        return;
    }
    ss_module_cache_own_load_begin();
    void *library = ss_dlopen_without_swift_backtracer(path);
    ss_module_cache_own_load_end();
    if (!library) {
        const char *reason = dlerror();
        ss_report("cannot load the profiler: ", reason ? reason : path, "; not profiling");
        return;
    }
    part.preload_main = (void (*)(void))dlsym(library, "stacksampler_preload_main");
    part.start = (int (*)(uint64_t, int))dlsym(library, "stacksampler_swift_start");
    part.stop = (int (*)(void))dlsym(library, "stacksampler_swift_stop");
    part.write = (int (*)(const char *, const char *))dlsym(library, "stacksampler_swift_write");
    if (!part.preload_main || !part.start || !part.stop || !part.write) {
        ss_report(path, " is not this version's profiler", "; not profiling");
        return;
    }
    ss_own_code_note_module((const void *)part.preload_main);
    loaded = &part;
}

const ss_swift_part *ss_swift_part_load(void) {
    pthread_once(&load_once, load);
    return loaded;
}
