/*
 * Descriptors and the profiler. `perf_fds [DIRECTORY]` (its files go there) works
 * `before_close` 0.3 s of CPU, counts this process's perf_event descriptors (those
 * /proc/self/fd links to "anon_inode:[perf_event]"), forks a child that counts its own and
 * exits with that count. Then it dup2()s a file of its own,
 * shared.data, onto the lowest perf_event descriptor's number (or 512 without one, where
 * counters used to be), forks a child that writes "child\n" there, and writes "parent\n"
 * there itself. Then it closes every descriptor above 2 (as daemons and some test harnesses
 * do), opens own.data (which gets number 3) and works `after_close` 0.5 s of CPU more,
 * writing 18,000 bytes ('a' to 'z' over and over) to own.data in 36 writes along the way.
 *
 * prints: parent perf fds N / child perf fds N / shared_fd N / child_write ok (or why not) /
 * shared_bytes N / own_fd N / own_bytes N / before close S / after close S (CPU seconds)
 */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

SAMPLED_FUNCTION uint64_t before_close(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t after_close(double seconds) { return burn_cpu(seconds, 0xC2B2AE3D27D4EB4FULL); }

/* A file of the program's at the number of the profiler's counter; written by a forked child
 * and by the parent. Returns the bytes the file holds then. */
static long share_with_child(void) {
    int number;
    perf_event_descriptors(&number);
    if (number < 0) number = 512;
    printf("shared_fd %d\n", number);
    int file = open("shared.data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (file < 0 || dup2(file, number) != number) return -1;
    close(file);
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
    double start = thread_cpu_seconds();
    uint64_t checksum = before_close(0.3);
    printf("before close %.3f\n", thread_cpu_seconds() - start);
    printf("parent perf fds %d\n", perf_event_descriptors(NULL));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(perf_event_descriptors(NULL));
    int status = 0;
    waitpid(child, &status, 0);
    printf("child perf fds %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("shared_bytes %ld\n", share_with_child());
    fflush(stdout);
    for (int fd = 3; fd < 4096; fd++) close(fd);
    int own = open("own.data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    start = thread_cpu_seconds();
    long written = work_writing(own, &checksum);
    close(own);
    printf("after close %.3f\n", thread_cpu_seconds() - start);
    printf("own_fd %d\n", own);
    printf("own_bytes %ld\n", written);
    printf("checksum %llx\n", (unsigned long long)checksum);
    return 0;
}
