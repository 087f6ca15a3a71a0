/*
 * The executable memory no loaded module accounts for: anonymous mappings (JIT code) and
 * files mapped by hand (V8 remaps its builtins from its executable into its code range); and
 * the code a runtime declares as its own inside a module in /tmp/perf-PID.map
 * (perf_map_ranges.c: V8's builtins in node's text). This is the code without CFI that the
 * walk may cross by frame pointer (frame_pointer_step.c); the rest of a module's code without
 * CFI is not (Swift -O code without -g has no frame pointer in functions that call).
 *
 * The sampler thread reads /proc/self/maps for it (ss_code_ranges_refresh), first at its
 * first refresh, then only when a walk met a pc that no module's table and no range covers,
 * and at most every REFRESH_INTERVAL_NS: JIT code is mapped and unmapped at run time. The
 * table is published as module_cache.c publishes its index: two fixed buffers, a reader
 * announces itself and never waits, a refresh writes only the buffer no reader has. The
 * refresh holds one descriptor (close-on-exec) while it reads, on the sampler thread.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    RANGE_CAPACITY = 4096,   /* ranges kept; past it, code is not crossed (its walks end early, counted) */
    SEGMENT_CAPACITY = 4096, /* executable segments of loaded modules, per refresh */
};
static const uint64_t REFRESH_INTERVAL_NS = 100000000;

typedef struct {
    ss_code_range ranges[RANGE_CAPACITY];
    size_t count;
} range_table;

static range_table tables[2];
static _Atomic int published = -1;
static _Atomic int readers[2];
static _Atomic int wanted = 1;
static uint64_t last_read_ns;
static pthread_mutex_t refresh_lock = PTHREAD_MUTEX_INITIALIZER;
/* The loaded modules' executable segments, under refresh_lock (off the caller's stack). */
static ss_code_range segments[SEGMENT_CAPACITY];
static size_t segment_count;

typedef int (*phdr_callback)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback, void *);

static int note_segments(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    size_t room = SEGMENT_CAPACITY - segment_count;
    size_t count = ss_module_code_segments(info, segments + segment_count, room);
    segment_count += count < room ? count : room;
    return 0;
}

/* Whether [low, high) overlaps a loaded module's executable segment. */
static int held_by_module(uintptr_t low, uintptr_t high) {
    for (size_t i = 0; i < segment_count; i++)
        if (low < segments[i].high && segments[i].low < high) return 1;
    return 0;
}

/* Whether a maps line's mapping is code no module accounts for; sets its bounds. */
static int unaccounted_code(const char *line, uintptr_t *low, uintptr_t *high) {
    unsigned long start, end;
    char permissions[5];
    int path_at = 0;
    /* Code that cannot be read (execute-only) is left out: the step reads the bytes before a return address. */
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, permissions, &path_at) != 3 || permissions[2] != 'x' ||
        permissions[0] != 'r')
        return 0;
    const char *path = line + path_at;
    /* The vDSO and vsyscall page have their own CFI or none at all, an executable stack holds no code: not JIT code. */
    if (strncmp(path, "[vdso]", 6) == 0 || strncmp(path, "[vsyscall]", 10) == 0 || strncmp(path, "[stack", 6) == 0) return 0;
    *low = start;
    *high = end;
    return path[0] != '/' || !held_by_module(start, end);
}

/* Whether [low, high) lies inside a loaded module's executable segment. */
static int inside_module(uintptr_t low, uintptr_t high) {
    for (size_t i = 0; i < segment_count; i++)
        if (segments[i].low <= low && high <= segments[i].high) return 1;
    return 0;
}

/* Adds `range` to `table` if there is room. */
static void append(range_table *table, ss_code_range range) {
    if (table->count < RANGE_CAPACITY) table->ranges[table->count++] = range;
}

/* Fills `table` from /proc/self/maps (sorted there by address), with the perf map's declared
 * ranges (sorted, inside modules: apart from the maps' ranges) merged in order. Returns 0 if
 * the maps cannot be read. */
static int read_ranges(range_table *table) {
    /* The calling thread's: /proc/self/maps is empty once the main thread has ended (pthread_exit). */
    FILE *maps = fopen("/proc/thread-self/maps", "re");
    if (!maps) return 0;
    const ss_code_range *declared;
    size_t declared_count = ss_perf_map_ranges(&declared), next = 0;
    table->count = 0;
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, maps) > 0) {
        uintptr_t low, high;
        if (!unaccounted_code(line, &low, &high)) continue;
        while (next < declared_count && declared[next].low < low) append(table, declared[next++]);
        append(table, (ss_code_range){low, high});
    }
    while (next < declared_count) append(table, declared[next++]);
    free(line);
    fclose(maps);
    return 1;
}

static void wait_for_readers(int buffer) {
    while (atomic_load(&readers[buffer]) != 0) sched_yield();
}

void ss_code_ranges_refresh(void) {
    uint64_t now = ss_now_ns();
    if (!atomic_load(&wanted) || (last_read_ns != 0 && now - last_read_ns < REFRESH_INTERVAL_NS)) return;
    static void *_Atomic real_symbol;
    dl_iterate_phdr_fn real = (dl_iterate_phdr_fn)ss_next_symbol("dl_iterate_phdr", &real_symbol);
    if (!real) return;
    pthread_mutex_lock(&refresh_lock);
    atomic_store(&wanted, 0);
    last_read_ns = now;
    segment_count = 0;
    real(note_segments, NULL);
    ss_perf_map_read(inside_module);
    int previous = atomic_load(&published);
    int target = previous == 0 ? 1 : 0;
    wait_for_readers(target);
    if (read_ranges(&tables[target])) atomic_store(&published, target);
    pthread_mutex_unlock(&refresh_lock);
}

void ss_code_ranges_want_refresh(void) {
    if (!atomic_load_explicit(&wanted, memory_order_relaxed)) atomic_store_explicit(&wanted, 1, memory_order_relaxed);
}

/* Enters and leaves the table around the lookup alone: no memory of the program is read while
 * entered, so a fault's jump out of the handler can never leave a reader counted (which would
 * make the next refresh wait for ever). */
int ss_code_ranges_contain(uintptr_t low, uintptr_t high) {
    int buffer = atomic_load(&published);
    for (;;) {
        if (buffer < 0) return 0;
        atomic_fetch_add(&readers[buffer], 1);
        int now = atomic_load(&published);
        if (now == buffer) break;
        atomic_fetch_sub(&readers[buffer], 1);
        buffer = now;
    }
    const range_table *table = &tables[buffer];
    size_t first = 0, past = table->count; /* first range starting past low */
    while (first < past) {
        size_t middle = (first + past) / 2;
        if (table->ranges[middle].low <= low) first = middle + 1; else past = middle;
    }
    int found = first > 0 && low <= high && high < table->ranges[first - 1].high;
    atomic_fetch_sub(&readers[buffer], 1);
    return found;
}

void ss_code_ranges_reset_after_fork(void) {
    /* A thread of the parent may have been reading or refreshing at fork(): it does not exist here. */
    atomic_store(&readers[0], 0);
    atomic_store(&readers[1], 0);
    pthread_mutex_init(&refresh_lock, NULL);
}
