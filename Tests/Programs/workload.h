/* Helpers shared by the StackSampler end-to-end test programs: clocks, argument parsing,
 * and a CPU burner that the optimizer cannot delete. Header-only so that every program
 * still compiles from a single `gcc -O2 program.c` command. */
#ifndef STACKSAMPLER_WORKLOAD_H
#define STACKSAMPLER_WORKLOAD_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A function the profiler must see as a frame of its own: never inlined into its caller,
 * never cloned (no `.constprop`/`.isra` suffix) and never merged with a look-alike. */
#define SAMPLED_FUNCTION __attribute__((noinline, noipa))

/* Seconds on `clock` (CLOCK_THREAD_CPUTIME_ID, CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC). */
static inline double clock_seconds(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time consumed so far by the calling thread, in seconds. */
static inline double thread_cpu_seconds(void) { return clock_seconds(CLOCK_THREAD_CPUTIME_ID); }

/* argv[1] as a number of seconds (fractions allowed), or `fallback` when absent. */
static inline double seconds_argument(int argc, char **argv, double fallback) {
    return argc > 1 ? strtod(argv[1], NULL) : fallback;
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline double now_ms(void) { return clock_seconds(CLOCK_MONOTONIC) * 1e3; }

/* Sleeps `milliseconds` until an absolute deadline, so that a profiling signal cannot shorten the sleep. */
static inline void sleep_ms(double milliseconds) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    long long nanoseconds = deadline.tv_nsec + (long long)(milliseconds * 1e6);
    deadline.tv_sec += nanoseconds / 1000000000LL;
    deadline.tv_nsec = nanoseconds % 1000000000LL;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {}
}

/* Iterations of the dependent multiply-add chain in one block of work (about 20 us on a 3 GHz core). */
#define BLOCK_ITERATIONS 16384

/* Burns CPU in the caller's own frame until the calling thread has used `seconds` more CPU
 * time. `salt` makes the generated code differ per caller, so look-alike callers stay
 * distinct functions. Returns a value derived from all the work, so none of it is dead.
 * The thread clock is a system call (~0.5 us); it is read once a block, so that nearly all
 * samples land in the caller, not in clock_gettime. (No helper for the block: the inlined
 * program's DWARF must show burn_cpu at the leaf.) */
static inline __attribute__((always_inline)) uint64_t burn_cpu(double seconds, uint64_t salt) {
    const double end = thread_cpu_seconds() + seconds;
    uint64_t x = salt;
    do {
        for (int i = 0; i < BLOCK_ITERATIONS; i++) {
            x = x * 6364136223846793005ULL + salt;
        }
    } while (thread_cpu_seconds() < end);
    return x;
}

/* `blocks` blocks of arithmetic in the caller's own frame, with no system call: a fixed amount
 * of work, which takes longer when a profiler slows the program down. */
static inline __attribute__((always_inline)) uint64_t burn_blocks(long blocks, uint64_t salt) {
    uint64_t x = salt;
    for (long b = 0; b < blocks; b++) {
        for (int i = 0; i < BLOCK_ITERATIONS; i++) {
            x = x * 6364136223846793005ULL + salt;
        }
    }
    return x;
}

/* How much CPU work a program is told to do: by default `seconds` of each working thread's CPU
 * time (what the tests ask: about as many samples whatever the profiler costs); with
 * `--blocks N`, `blocks` blocks of arithmetic (what the benchmarks ask: the same work under
 * every profiler, so that the run time under one, divided by the run time without, is its
 * slowdown). */
struct work_amount {
    int fixed; /* blocks, not seconds */
    double seconds;
    long blocks;
};

/* The work asked for on the command line: `--blocks N`, or SECONDS (fractions allowed), or,
 * with no argument, `default_seconds`. Exits with status 2 and a message on a bad count. */
static inline struct work_amount work_argument(int argc, char **argv, double default_seconds) {
    if (argc > 1 && strcmp(argv[1], "--blocks") == 0) {
        char *end = NULL;
        const long blocks = argc > 2 ? strtol(argv[2], &end, 10) : 0;
        if (argc < 3 || *end != 0 || blocks < 1) {
            fprintf(stderr, "%s: --blocks wants a whole number of blocks, 1 or more\n", argv[0]);
            exit(2);
        }
        return (struct work_amount){.fixed = 1, .blocks = blocks};
    }
    return (struct work_amount){.seconds = seconds_argument(argc, argv, default_seconds)};
}

/* `tenths` tenths of `amount` (whole blocks, rounded down). */
static inline struct work_amount work_tenths(struct work_amount amount, int tenths) {
    return (struct work_amount){.fixed = amount.fixed, .seconds = amount.seconds * tenths / 10, .blocks = amount.blocks * tenths / 10};
}

/* Does `amount` of work in the caller's own frame (see burn_cpu and burn_blocks). */
static inline __attribute__((always_inline)) uint64_t burn_work(struct work_amount amount, uint64_t salt) {
    return amount.fixed ? burn_blocks(amount.blocks, salt) : burn_cpu(amount.seconds, salt);
}

/* A small deterministic generator (xorshift64*). */
static inline uint64_t next_random(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

/* How many of this process's descriptors are of `kind`: "perf_event", counters (links to
 * "anon_inode:[perf_event]" in /proc/self/fd), or "syscall", a thread's
 * /proc/PID/task/TID/syscall held open; -1 if that cannot be read. The lowest such number in
 * `*lowest` (-1 if none) when `lowest` is not NULL. */
static inline int descriptors_of_kind(const char *kind, int *lowest) {
    DIR *directory = opendir("/proc/self/fd");
    if (!directory) return -1;
    int count = 0, first = -1, perf = strcmp(kind, "perf_event") == 0;
    struct dirent *entry;
    char path[300], target[128];
    while ((entry = readdir(directory))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", entry->d_name);
        ssize_t length = readlink(path, target, sizeof target - 1);
        if (length <= 0) continue;
        target[length] = 0;
        int matches = perf ? strcmp(target, "anon_inode:[perf_event]") == 0
                           : strncmp(target, "/proc/", 6) == 0 && length > 8 && strcmp(target + length - 8, "/syscall") == 0;
        if (!matches) continue;
        count++;
        int fd = atoi(entry->d_name);
        if (first < 0 || fd < first) first = fd;
    }
    closedir(directory);
    if (lowest) *lowest = first;
    return count;
}

/* How many of this process's descriptors are perf_event counters (descriptors_of_kind). */
static inline int perf_event_descriptors(int *lowest) { return descriptors_of_kind("perf_event", lowest); }

/* Whether this process holds a POSIX timer (a line in /proc/self/timers). */
static inline int has_posix_timer(void) {
    FILE *timers = fopen("/proc/self/timers", "r");
    if (!timers) return 0;
    int found = fgetc(timers) != EOF;
    fclose(timers);
    return found;
}

/* Waits (at most `limit` seconds, checking every millisecond) until a cpu-mode profiler has
 * armed something in this process: a CPU-time timer or a perf_event counter. A new image's
 * first counter can take the kernel tens of milliseconds to open, so a program that must be
 * sampled for the whole of a short piece of work waits for it first. Unprofiled, it returns
 * after `limit`; returns whether the profiler was seen. */
static inline int wait_until_cpu_sampling_armed(double limit) {
    const double end = clock_seconds(CLOCK_MONOTONIC) + limit;
    while (perf_event_descriptors(NULL) <= 0 && !has_posix_timer()) {
        if (clock_seconds(CLOCK_MONOTONIC) >= end) return 0;
        usleep(1000);
    }
    return 1;
}

#endif
