/*
 * Descriptors and the profiler. `profiler_fds [DIRECTORY [KIND]]` (its files go to DIRECTORY;
 * KIND is "perf_event", the default: the counters, or "syscall": the /proc/self/task/TID/syscall
 * files wall mode holds open for threads it walks asleep) works `before_close` 0.3 s of CPU,
 * counts this process's descriptors of KIND (workload.h), forks a child that counts its own
 * and exits with that count. Then it dup2()s a file of its own, shared.data, onto the lowest
 * such descriptor's number (or 512 without one, where counters used to be), forks a child that
 * writes "child\n" there, and writes "parent\n" there itself. Then it closes every descriptor
 * above 2 (as daemons and some test harnesses do), opens own.data (which gets number 3) and
 * works `after_close` 0.5 s of CPU more, writing 18,000 bytes ('a' to 'z' over and over) to
 * own.data in 36 writes along the way.
 *
 * With "syscall", a thread sleeps 2 ms at a time in `sleep_before` from the start, so that it is
 * walked asleep and its file held; once the file of the program's is at that number, the thread
 * ends (the profiler forgets it, and must not close the number) before the children and the
 * parent write there; another thread then sleeps in `sleep_after` while the program closes
 * every descriptor and works on, so that its file is held, closed by the program, and held
 * again. Each sleeper counts the sleeps that ended early (EINTR).
 *
 * prints: parent fds N / child fds N / shared_fd N / child_write ok (or why not) / shared_bytes N
 * / own_fd N / own_bytes N / before close S / after close S (CPU seconds) / interrupted N
 */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

SAMPLED_FUNCTION uint64_t before_close(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t after_close(double seconds) { return burn_cpu(seconds, 0xC2B2AE3D27D4EB4FULL); }

static atomic_int sleeper_stop, interrupted;

/* Sleeps 2 ms at a time until told to stop, counting the sleeps that ended early. */
static void sleep_until_stopped(void) {
    while (!atomic_load(&sleeper_stop)) {
        struct timespec two_ms = {0, 2000000};
        if (nanosleep(&two_ms, NULL) != 0 && errno == EINTR) atomic_fetch_add(&interrupted, 1);
    }
}

SAMPLED_FUNCTION void *sleep_before(void *unused) { sleep_until_stopped(); return unused; }
SAMPLED_FUNCTION void *sleep_after(void *unused) { sleep_until_stopped(); return unused; }

/* Starts a sleeper thread running `body`. */
static pthread_t start_sleeper(void *(*body)(void *)) {
    atomic_store(&sleeper_stop, 0);
    pthread_t thread;
    if (pthread_create(&thread, NULL, body, NULL) != 0) exit(3);
    return thread;
}

/* Stops the sleeper thread and waits for it, and 150 ms more: the profiler forgets it meanwhile,
 * at its next wake (at most 50 ms of ticks away) or at its next thread scan. */
static void stop_sleeper(pthread_t thread) {
    atomic_store(&sleeper_stop, 1);
    pthread_join(thread, NULL);
    usleep(150000);
}

/* A file of the program's at the number of the lowest profiler's descriptor of `kind`; written
 * by a forked child and by the parent; with a sleeper (`held`), that thread ends first. Returns
 * the bytes the file holds then. */
static long share_with_child(const char *kind, pthread_t *held) {
    int number;
    descriptors_of_kind(kind, &number);
    if (number < 0) number = 512;
    printf("shared_fd %d\n", number);
    int file = open("shared.data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file < 0 || dup2(file, number) != number) return -1;
    close(file);
    if (held) stop_sleeper(*held);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(write(number, "child\n", 6) == 6 ? 0 : errno);
    int status = 0;
    waitpid(child, &status, 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    printf("child_write %s\n", code == 0 ? "ok" : code > 0 ? strerror(code) : "killed");
    if (write(number, "parent\n", 7) != 7) printf("parent_write %s\n", strerror(errno));
    off_t size = lseek(number, 0, SEEK_END);
    close(number);
    return (long)size;
}

/* Works `after_close`, writing own.data (descriptor `fd`) in 36 pieces of 500 bytes between
 * its 36 parts; returns the bytes written. */
static long work_writing(int fd, uint64_t *checksum) {
    char piece[500];
    for (size_t i = 0; i < sizeof piece; i++) piece[i] = (char)('a' + i % 26);
    long written = 0;
    for (int part = 0; part < 36; part++) {
        *checksum ^= after_close(0.5 / 36);
        ssize_t result = write(fd, piece, sizeof piece);
        if (result > 0) written += result;
    }
    return written;
}

int main(int argc, char **argv) {
    if (argc > 1 && chdir(argv[1]) != 0) return 2; /* where shared.data and own.data go */
    const char *kind = argc > 2 ? argv[2] : "perf_event";
    int sleepers = strcmp(kind, "syscall") == 0;
    pthread_t sleeper;
    if (sleepers) sleeper = start_sleeper(sleep_before);
    double start = thread_cpu_seconds();
    uint64_t checksum = before_close(0.3);
    printf("before close %.3f\n", thread_cpu_seconds() - start);
    printf("parent fds %d\n", descriptors_of_kind(kind, NULL));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(descriptors_of_kind(kind, NULL));
    int status = 0;
    waitpid(child, &status, 0);
    printf("child fds %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("shared_bytes %ld\n", share_with_child(kind, sleepers ? &sleeper : NULL));
    fflush(stdout);
    if (sleepers) {
        sleeper = start_sleeper(sleep_after);
        usleep(50000);
    }
    for (int fd = 3; fd < 4096; fd++) close(fd);
    int own = open("own.data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    start = thread_cpu_seconds();
    long written = work_writing(own, &checksum);
    close(own);
    if (sleepers) stop_sleeper(sleeper);
    printf("after close %.3f\n", thread_cpu_seconds() - start);
    printf("own_fd %d\n", own);
    printf("own_bytes %ld\n", written);
    printf("interrupted %d\n", atomic_load(&interrupted));
    printf("checksum %llx\n", (unsigned long long)checksum);
    return 0;
}
