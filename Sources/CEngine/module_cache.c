/*
 * The unwind tables of the loaded modules, as the handler sees them. The
 * sampler thread refreshes them when the loader's add/remove counters move:
 * inside the real dl_iterate_phdr (the loader's lock held, so no module can
 * go away meanwhile) it compiles a table for each module not seen before
 * (unwind_table.c), then publishes an index of every module's code range and
 * table, sorted by address. When the engine starts in a process that has only
 * the caller's thread (the preload library's constructor, before main), no
 * table is compiled there, so that a profiled program does not start a
 * millisecond later (libc's table alone takes about that): the modules are
 * listed, and the sampler thread, as it starts, compiles every listed one
 * before the timers are armed (thread_registry.c). (Compiling only libc, the
 * loader and the executable first left the program's other libraries to the
 * first refresh, a tick later: xz's first samples in liblzma ended at the leaf.)
 * The profiler's own modules (its Swift part, the Swift runtime: most of the
 * work) are compiled only once a walk ends early, maybe in one of them (see own_bases).
 * Every compile gives up when the sampler is stopped, so a program that exits
 * at once does not wait for it. A process with running threads
 * (Profiler.start in a service) gets every table at once, so that no thread's
 * sample meets a module without one. The handler never calls dl_iterate_phdr
 * or takes the loader's lock.
 *
 * Two index buffers: a refresh writes only the one not published, and only
 * once no handler still reads it; a handler announces itself as a reader,
 * then checks the buffer is still the published one, so it never waits.
 * Tables of modules gone are unmapped only once no handler reads the index
 * that listed them.
 *
 * Only the sampler thread refreshes. dlclose is interposed to wake it at once.
 * The caller of dlclose does not refresh itself: it may hold the loader's lock
 * (dlclose inside a dl_iterate_phdr callback) or a lock of its own that a
 * callback needs, and a refresh takes the loader's lock. A module closed
 * without the interposed dlclose (glibc's internal closes) keeps its table
 * until the next tick; the table is a copy, so reading it is safe, and no code
 * runs at its addresses any more. (dlopen is not interposed: the loader
 * resolves a dlopen's RUNPATH and $ORIGIN from its caller.)
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

typedef int (*phdr_callback)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback, void *);

enum {
    MODULE_CAPACITY = 2048,
    MODULE_CODE_SEGMENTS = 2, /* executable segments kept per module (linkers make one) */
    CODE_CAPACITY = 4096,     /* executable segments in an index */
};

/* A module as the refresh knows it: identity, and its table (NULL without unwind info,
 * or while `pending`: listed at start, or its compile given up, and compiled by a later
 * pass of the sampler thread). */
typedef struct {
    uintptr_t base;
    const void *program_headers;
    int header_count;
    int seen;
    int pending;
    int own;
    ss_unwind_table *table;
    ss_code_range code[MODULE_CODE_SEGMENTS];
    size_t code_count;
} known_module;

typedef struct {
    uintptr_t low, high; /* [low, high): the addresses its rows cover */
    const ss_unwind_table *table;
} indexed_module;

struct ss_module_index {
    indexed_module modules[MODULE_CAPACITY];
    size_t count;
    /* Every listed module's executable segments, with rows or without, sorted by address. */
    ss_code_range code[CODE_CAPACITY];
    size_t code_count;
};

static ss_module_index indexes[2];
static _Atomic int published = -1;
static _Atomic int readers[2];
static known_module known[MODULE_CAPACITY];
static size_t known_count;
static unsigned long long cached_adds = ~0ull, cached_subs = ~0ull;
static _Atomic uint64_t generation;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;

/* The profiler's own modules: those its Swift part brought in (ss_module_cache_own_load_begin
 * and _end around that load), by load address. No thread of the program runs in them while it
 * is sampled (their code runs on the profiler's own threads, or before and after sampling), so
 * their tables (about 1.4 MB of .eh_frame, most of the sampler's start-up work: 12 ms of a
 * service's first window) are left out of the compile. A walk that ends early asks for them
 * (`own_tables_wanted`, set by the handler): the main thread runs their destructors at exit,
 * while it is still sampled, and a program may come to use one of them (dlopen of a library
 * that needs libstdc++). The samples before the compile end early, marked as such. */
enum { OWN_CAPACITY = 64 };
static uintptr_t own_bases[OWN_CAPACITY];
static size_t own_count, modules_before_own_load;
static _Atomic int own_tables_wanted;

static dl_iterate_phdr_fn real_dl_iterate_phdr(void) {
    static void *_Atomic real_symbol;
    return (dl_iterate_phdr_fn)ss_next_symbol("dl_iterate_phdr", &real_symbol);
}

static int count_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)info, (void)size;
    ++*(size_t *)data;
    return 0;
}

static int note_own_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    size_t *index = data;
    if ((*index)++ >= modules_before_own_load && own_count < OWN_CAPACITY) own_bases[own_count++] = info->dlpi_addr;
    return 0;
}

void ss_module_cache_own_load_begin(void) {
    dl_iterate_phdr_fn real = real_dl_iterate_phdr();
    size_t count = 0;
    if (real) real(count_module, &count);
    modules_before_own_load = count;
}

void ss_module_cache_own_load_end(void) {
    dl_iterate_phdr_fn real = real_dl_iterate_phdr();
    size_t index = 0;
    if (real) real(note_own_module, &index);
}

void ss_module_cache_want_own_tables(void) { atomic_store_explicit(&own_tables_wanted, 1, memory_order_relaxed); }

static int is_own_module(const struct dl_phdr_info *info) {
    for (size_t i = 0; i < own_count; i++)
        if (own_bases[i] == info->dlpi_addr) return 1;
    return 0;
}

/* Whether a pass that compiles pending modules compiles `module` now. */
static int compiled_now(const known_module *module) {
    return module->pending && (!module->own || atomic_load_explicit(&own_tables_wanted, memory_order_relaxed));
}

typedef struct {
    unsigned long long adds, subs;
} loader_counters;

static int read_counters(struct dl_phdr_info *info, size_t size, void *data) {
    loader_counters *counters = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        counters->adds = info->dlpi_adds;
        counters->subs = info->dlpi_subs;
    }
    return 1;
}

/* What a pass of note_module compiles. */
typedef enum {
    PASS_LIST, /* at start: every module listed as pending, none compiled */
    PASS_ALL,  /* new and pending modules */
} pass_kind;

typedef struct {
    pass_kind kind;
    int (*cancelled)(void); /* NULL, or says the sampler is stopping: compiles give up */
} refresh_pass;

/* Compiles the table of `module` unless the pass gives up; it stays pending then. */
static void compile(known_module *module, const struct dl_phdr_info *info, const refresh_pass *pass) {
    int cancelled = 0;
    module->table = ss_unwind_table_build(info, pass->cancelled, &cancelled);
    module->pending = cancelled;
}

/* Marks the module seen, compiling its table if the pass asks for it (new, or pending).
 * Runs under the loader's lock. */
static int note_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    refresh_pass *pass = data;
    if (pass->kind == PASS_ALL) ss_async_runtime_note(info); /* reads a file: not on the start-up path */
    known_module *module = NULL;
    for (size_t i = 0; i < known_count && !module; i++)
        if (known[i].base == info->dlpi_addr && known[i].program_headers == info->dlpi_phdr &&
            known[i].header_count == info->dlpi_phnum)
            module = &known[i];
    if (!module) {
        if (known_count == MODULE_CAPACITY) return 1; /* the rest have no table: their samples end early */
        module = &known[known_count++];
        *module = (known_module){info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, 0, 1, is_own_module(info), NULL, {{0, 0}}, 0};
        size_t segments = ss_module_code_segments(info, module->code, MODULE_CODE_SEGMENTS);
        module->code_count = segments < MODULE_CODE_SEGMENTS ? segments : MODULE_CODE_SEGMENTS;
    }
    module->seen = 1;
    if (pass->kind == PASS_ALL && compiled_now(module)) compile(module, info, pass);
    return 0;
}

/* Adds a module's executable segments to the index's, kept sorted. */
static void index_code(ss_module_index *index, const known_module *module) {
    for (size_t k = 0; k < module->code_count && index->code_count < CODE_CAPACITY; k++) {
        size_t at = index->code_count++;
        while (at > 0 && index->code[at - 1].low > module->code[k].low) {
            index->code[at] = index->code[at - 1];
            at--;
        }
        index->code[at] = module->code[k];
    }
}

static void write_index(ss_module_index *index) {
    index->count = 0;
    index->code_count = 0;
    for (size_t i = 0; i < known_count; i++) {
        index_code(index, &known[i]);
        const ss_unwind_table *table = known[i].table;
        if (!table || table->count == 0) continue;
        indexed_module entry = {table->bias + table->rows[0].pc, table->bias + table->rows[table->count - 1].pc + 1, table};
        size_t at = index->count++;
        while (at > 0 && index->modules[at - 1].low > entry.low) {
            index->modules[at] = index->modules[at - 1];
            at--;
        }
        index->modules[at] = entry;
    }
}

static void wait_for_readers(int buffer) {
    while (atomic_load(&readers[buffer]) != 0) sched_yield();
}

/* Whether a module is still listed for compiling now. */
static int any_pending(void) {
    for (size_t i = 0; i < known_count; i++)
        if (compiled_now(&known[i])) return 1;
    return 0;
}

/* Lists new modules and compiles what the pass asks for, drops the tables of modules gone,
 * and (unless the pass only lists) publishes the new index. */
static void refresh(pass_kind kind, int (*cancelled)(void)) {
    dl_iterate_phdr_fn real = real_dl_iterate_phdr();
    if (!real) return;
    pthread_mutex_lock(&refresh_lock);
    loader_counters counters = {0, 0};
    real(read_counters, &counters);
    if (counters.adds == cached_adds && counters.subs == cached_subs && (kind == PASS_LIST || !any_pending())) {
        pthread_mutex_unlock(&refresh_lock);
        return;
    }
    for (size_t i = 0; i < known_count; i++) known[i].seen = 0;
    refresh_pass pass = {kind, cancelled};
    real(note_module, &pass);
    /* Modules gone leave the list now and the index next; their tables stay until no reader has them. */
    static ss_unwind_table *gone[MODULE_CAPACITY]; /* under refresh_lock; off a caller's small stack */
    size_t gone_count = 0, kept = 0;
    for (size_t i = 0; i < known_count; i++) {
        if (known[i].seen) known[kept++] = known[i];
        else if (known[i].table) gone[gone_count++] = known[i].table;
    }
    known_count = kept;
    if (kind != PASS_LIST) {
        int previous = atomic_load(&published);
        int target = previous == 0 ? 1 : 0;
        wait_for_readers(target);
        write_index(&indexes[target]);
        atomic_store(&published, target);
        if (previous >= 0) wait_for_readers(previous);
    }
    for (size_t i = 0; i < gone_count; i++) ss_unwind_table_free(gone[i]);
    atomic_fetch_add(&generation, 1);
    cached_adds = counters.adds;
    cached_subs = counters.subs;
    pthread_mutex_unlock(&refresh_lock);
}

void ss_module_cache_refresh(void) { refresh(PASS_ALL, ss_sampler_stop_requested); }

void ss_module_cache_prepare(int deferred) { refresh(deferred ? PASS_LIST : PASS_ALL, NULL); }

void ss_module_cache_reset_after_fork(void) {
    /* A thread of the parent may have been reading or refreshing at fork(): it does not exist here. */
    atomic_store(&readers[0], 0);
    atomic_store(&readers[1], 0);
    pthread_mutex_init(&refresh_lock, NULL);
}

const ss_module_index *ss_module_index_enter(int *buffer) {
    for (;;) {
        int index = atomic_load(&published);
        if (index < 0) return NULL;
        atomic_fetch_add(&readers[index], 1);
        if (atomic_load(&published) == index) {
            *buffer = index;
            return &indexes[index];
        }
        atomic_fetch_sub(&readers[index], 1);
    }
}

void ss_module_index_leave(int buffer) {
    atomic_fetch_sub(&readers[buffer], 1);
}

const ss_unwind_row *ss_module_index_find(const ss_module_index *index, uintptr_t pc) {
    size_t low = 0, high = index->count; /* first module starting past pc */
    while (low < high) {
        size_t middle = (low + high) / 2;
        if (index->modules[middle].low <= pc) low = middle + 1; else high = middle;
    }
    if (low == 0 || pc >= index->modules[low - 1].high) return NULL;
    return ss_unwind_table_find(index->modules[low - 1].table, pc);
}

int ss_module_index_holds_code(const ss_module_index *index, uintptr_t address) {
    size_t low = 0, high = index->code_count; /* first segment starting past address */
    while (low < high) {
        size_t middle = (low + high) / 2;
        if (index->code[middle].low <= address) low = middle + 1; else high = middle;
    }
    return low > 0 && address < index->code[low - 1].high;
}

SS_INTERPOSER int dlclose(void *handle) {
    static void *_Atomic real;
    int (*real_dlclose)(void *) = (int (*)(void *))ss_next_symbol("dlclose", &real);
    if (!real_dlclose) return -1;
    int result = real_dlclose(handle);
    /* Only once the engine has tables to keep current (it made the first ones at init). */
    if (atomic_load(&published) >= 0) ss_sampler_request_refresh();
    return result;
}

uint64_t ss_module_cache_generation(void) { return atomic_load(&generation); }
