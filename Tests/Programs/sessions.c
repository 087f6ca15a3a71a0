/* sessions: argv[1] profiling sessions in a row through the C API (default 1000), linked
 * against libStackSamplerPreload.so like c_api. Sessions alternate cpu and wall mode at 1 ms;
 * in each, the main thread spends about 8 ms of CPU in `session_busy` while a thread created
 * during the session runs and ends, and a thread is created and joined between sessions. Each
 * session's profile is written as folded stacks to argv[2] and read back.
 * Prints `bad_session N REASON` for the first session that fails (an API error, or more
 * samples than the session's CPU or length can explain), then `sessions N` (completed),
 * `without_busy_cpu N` and `without_busy_wall N` (sessions of each mode with no sample of
 * session_busy), the samples of session_busy in
 * cpu-mode sessions and the CPU it used in them (`cpu_busy_samples N`, `cpu_busy_us N`),
 * the process's POSIX timers, file descriptors, threads (those not exiting) and
 * resident anonymous kilobytes after session 10 (`timers_10 N`, `fds_10 N`, `threads_10 N`, `rss_kb_10 N`)
 * and after the last (`..._end`), the largest resident size after sessions 10 to 100
 * (`rss_kb_early_max N`), and `timers_between_max N`, the most timers seen between sessions. Build: gcc -O2 -pthread sessions.c -lStackSamplerPreload */
#include "workload.h"
#include <dirent.h>
#include <pthread.h>
#include <stacksampler.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t sink;
static int without_busy[2];
static long cpu_busy_samples, cpu_busy_us;

SAMPLED_FUNCTION static void session_busy(void) { sink += burn_cpu(0.008, 1); }
SAMPLED_FUNCTION static void short_thread_work(void) { sink += burn_cpu(0.001, 2); }

static void *short_thread(void *unused) {
    (void)unused;
    short_thread_work();
    return NULL;
}

/* Lines of `path` that start with `prefix`. */
static int count_lines(const char *path, const char *prefix) {
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    int count = 0;
    char line[512];
    while (fgets(line, sizeof line, file))
        if (strncmp(line, prefix, strlen(prefix)) == 0) count++;
    fclose(file);
    return count;
}

/* Entries of a /proc directory, without . and .. */
static int count_entries(const char *path) {
    DIR *directory = opendir(path);
    if (!directory) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(directory));)
        if (entry->d_name[0] != '.') count++;
    closedir(directory);
    return count - (strcmp(path, "/proc/self/fd") == 0); /* the directory's own descriptor */
}

/* Resident anonymous memory, where a leak shows: resident less the pages of mapped files (the
 * libraries' code and unwind data, read in when first used: the profiler's own unwind tables
 * are compiled in whichever session first needs them). */
static long resident_kb(void) {
    FILE *file = fopen("/proc/self/statm", "r");
    if (!file) return -1;
    long pages_total = 0, pages_resident = 0, pages_shared = 0;
    if (fscanf(file, "%ld %ld %ld", &pages_total, &pages_resident, &pages_shared) != 3) pages_resident = pages_shared = -1;
    fclose(file);
    return (pages_resident - pages_shared) * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The process's threads that are not exiting. A joined thread's task stays listed while the
 * kernel finishes its exit (pthread_join returns once its tid is cleared, early in that exit),
 * with PF_EXITING (0x4) in its flags: on a machine whose host steals time, one such thread
 * was counted after the last session and taken for a leak. */
static int count_live_threads(void) {
    DIR *directory = opendir("/proc/self/task");
    if (!directory) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(directory));) {
        if (entry->d_name[0] == '.') continue;
        char path[64], line[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", entry->d_name);
        FILE *file = fopen(path, "r");
        if (!file) continue; /* gone meanwhile */
        size_t length = fread(line, 1, sizeof line - 1, file);
        fclose(file);
        line[length] = 0;
        /* After the name's closing parenthesis: state, ppid, pgrp, session, tty, tpgid, flags. */
        const char *rest = strrchr(line, ')');
        unsigned long flags = 0;
        if (rest && sscanf(rest + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 && (flags & 0x4)) continue;
        count++;
    }
    closedir(directory);
    return count;
}

static void print_resources(const char *when) {
    printf("timers_%s %d\nfds_%s %d\nthreads_%s %d\nrss_kb_%s %ld\n", when, count_lines("/proc/self/timers", "ID:"),
           when, count_entries("/proc/self/fd"), when, count_live_threads(), when, resident_kb());
}

/* Samples in the folded file at `path`: all of them, and those with session_busy on the stack. */
static int read_counts(const char *path, long *total, long *busy) {
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    *total = *busy = 0;
    char line[8192];
    while (fgets(line, sizeof line, file)) {
        char *space = strrchr(line, ' ');
        if (line[0] == '#' || !space) continue;
        long count = atol(space + 1);
        *total += count;
        if (strstr(line, "session_busy")) *busy += count;
    }
    fclose(file);
    return 0;
}

/* One session; NULL, or the reason it failed. */
static const char *run_session(int index, const char *path) {
    int mode = index % 2 ? STACKSAMPLER_MODE_WALL : STACKSAMPLER_MODE_CPU;
    double cpu_before = clock_seconds(CLOCK_PROCESS_CPUTIME_ID), wall_before = clock_seconds(CLOCK_MONOTONIC);
    if (stacksampler_start(1000000, mode) != STACKSAMPLER_OK) return "start";
    pthread_t during;
    if (pthread_create(&during, NULL, short_thread, NULL) != 0) return "pthread_create";
    double busy_before = thread_cpu_seconds();
    session_busy();
    double busy_cpu = thread_cpu_seconds() - busy_before;
    pthread_join(during, NULL);
    if (stacksampler_stop() != STACKSAMPLER_OK) return "stop";
    double cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu_before, wall = clock_seconds(CLOCK_MONOTONIC) - wall_before;
    if (stacksampler_write(path, "folded") != STACKSAMPLER_OK) return "write";
    long total, busy;
    if (read_counts(path, &total, &busy) != 0) return "read";
    if (busy == 0) without_busy[mode]++;
    if (mode == STACKSAMPLER_MODE_CPU) {
        cpu_busy_samples += busy;
        cpu_busy_us += (long)(busy_cpu * 1e6);
    }
    /* cpu: a sample per ms of CPU; wall: one per ms per thread (at most 2 of the program's,
     * and ticks owed to the main thread after a late wake). Three times that is impossible. */
    double limit = 3 * 1000 * (mode == STACKSAMPLER_MODE_CPU ? cpu : 2 * wall) + 10;
    if (total > limit) return "more samples than the session can explain";
    return NULL;
}

int main(int argc, char **argv) {
    const int sessions = argc > 1 ? atoi(argv[1]) : 1000;
    const char *path = argc > 2 ? argv[2] : "session.folded";
    int completed = 0, timers_between_max = 0;
    long rss_early_max = 0;
    for (int index = 0; index < sessions; index++) {
        const char *failure = run_session(index, path);
        if (failure) {
            printf("bad_session %d %s\n", index, failure);
            break;
        }
        completed++;
        int timers = count_lines("/proc/self/timers", "ID:");
        if (timers > timers_between_max) timers_between_max = timers;
        pthread_t between;
        if (pthread_create(&between, NULL, short_thread, NULL) == 0) pthread_join(between, NULL);
        if (completed == 10) print_resources("10");
        if (completed >= 10 && completed <= 100 && resident_kb() > rss_early_max) rss_early_max = resident_kb();
    }
    print_resources("end");
    printf("rss_kb_early_max %ld\n", rss_early_max);
    printf("sessions %d\ntimers_between_max %d\nwithout_busy_cpu %d\nwithout_busy_wall %d\ncpu_busy_samples %ld\n"
           "cpu_busy_us %ld\n", completed, timers_between_max, without_busy[STACKSAMPLER_MODE_CPU],
           without_busy[STACKSAMPLER_MODE_WALL], cpu_busy_samples, cpu_busy_us);
    return 0;
}
