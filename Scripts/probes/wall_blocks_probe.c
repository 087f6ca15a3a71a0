/*
 * What each building block of a wall mode without perf_event_open costs here, for the design
 * (docs/benchmarks.md, "Wall mode's building blocks without perf_event_open"): the calls every
 * process may make, even behind a container's or systemd's filter. One thread sleeps in
 * nanosleep and one spins; the measuring thread times, over ROUNDS calls each (median and 90th
 * percentile, ns):
 *   cpu-clock      clock_gettime on another thread's CPU-time clock ((~tid << 3) | 6)
 *   stat           pread of /proc/self/task/TID/stat, its descriptor held open
 *   schedstat      pread of /proc/self/task/TID/schedstat, held open
 *   syscall        pread of /proc/self/task/TID/syscall, held open (the sleeper's)
 *   syscall-open   open, read and close of the same file
 *   tgkill-self    tgkill of the calling thread with a handled signal, to the handler's return
 *   timer-arm      timer_settime of a CPU-time timer on the spinner (SIGEV_THREAD_ID)
 *
 * Build: gcc -O2 -pthread -o wall_blocks_probe Scripts/probes/wall_blocks_probe.c
 * Run:   ./wall_blocks_probe [ROUNDS]      (default 20000)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile pid_t sleeper_tid, spinner_tid;
static volatile sig_atomic_t handled;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *sleeper(void *unused) {
    (void)unused;
    sleeper_tid = (pid_t)syscall(SYS_gettid);
    while (!stop) nanosleep(&(struct timespec){0, 50000000}, NULL);
    return NULL;
}

static void *spinner(void *unused) {
    (void)unused;
    spinner_tid = (pid_t)syscall(SYS_gettid);
    volatile uint64_t sink = 0;
    while (!stop) sink += 1;
    return NULL;
}

static void on_signal(int signo) {
    (void)signo;
    handled++;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, uint64_t *times, int rounds) {
    qsort(times, (size_t)rounds, sizeof *times, compare);
    printf("%-14s median %6llu ns   p90 %6llu ns\n", name, (unsigned long long)times[rounds / 2],
           (unsigned long long)times[rounds * 9 / 10]);
}

static int open_task_file(pid_t tid, const char *name) {
    char path[96];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)tid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    return fd;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    if (rounds < 10) rounds = 10;
    uint64_t *times = calloc((size_t)rounds, sizeof *times);
    pthread_t threads[2];
    pthread_create(&threads[0], NULL, sleeper, NULL);
    pthread_create(&threads[1], NULL, spinner, NULL);
    while (!sleeper_tid || !spinner_tid) usleep(1000);
    usleep(100000);
    char buffer[1024];

    clockid_t clock = (clockid_t)((~(unsigned)spinner_tid << 3) | 6);
    for (int i = 0; i < rounds; i++) {
        struct timespec spent;
        uint64_t begin = now_ns();
        clock_gettime(clock, &spent);
        times[i] = now_ns() - begin;
    }
    report("cpu-clock", times, rounds);

    const char *held[] = {"stat", "schedstat", "syscall"};
    for (size_t file = 0; file < 3; file++) {
        int fd = open_task_file(file == 2 ? sleeper_tid : spinner_tid, held[file]);
        for (int i = 0; i < rounds; i++) {
            uint64_t begin = now_ns();
            if (pread(fd, buffer, sizeof buffer, 0) < 0) perror("pread");
            times[i] = now_ns() - begin;
        }
        close(fd);
        report(held[file], times, rounds);
    }

    for (int i = 0; i < rounds; i++) {
        uint64_t begin = now_ns();
        int fd = open_task_file(sleeper_tid, "syscall");
        if (read(fd, buffer, sizeof buffer) < 0) perror("read");
        close(fd);
        times[i] = now_ns() - begin;
    }
    report("syscall-open", times, rounds);

    signal(SIGUSR1, on_signal);
    pid_t self = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < rounds; i++) {
        uint64_t begin = now_ns();
        syscall(SYS_tgkill, getpid(), self, SIGUSR1);
        times[i] = now_ns() - begin;
    }
    report("tgkill-self", times, rounds);

    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = SIGUSR2;
    event._sigev_un._tid = spinner_tid;
    signal(SIGUSR2, SIG_IGN);
    timer_t timer;
    if (timer_create(clock, &event, &timer) != 0) {
        perror("timer_create");
        return 1;
    }
    for (int i = 0; i < rounds; i++) {
        struct itimerspec period = {{0, 1000000}, {0, 1000000}};
        uint64_t begin = now_ns();
        timer_settime(timer, 0, &period, NULL);
        times[i] = now_ns() - begin;
    }
    report("timer-arm", times, rounds);
    timer_delete(timer);

    stop = 1;
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    printf("signals handled %d\n", (int)handled);
    return 0;
}
