/*
 * Descriptors and the perf engine. Works `before_close` 0.3 s of CPU, counts this process's
 * perf_event descriptors (those /proc/self/fd links to "anon_inode:[perf_event]"), forks a
 * child that counts its own and exits with that count, then closes every descriptor above 2
 * (as daemons and some test harnesses do) and works `after_close` 0.5 s of CPU more.
 *
 * prints: parent perf fds N / child perf fds N / before close S / after close S (CPU seconds)
 */
#include "workload.h"
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

SAMPLED_FUNCTION uint64_t before_close(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }
SAMPLED_FUNCTION uint64_t after_close(double seconds) { return burn_cpu(seconds, 0xC2B2AE3D27D4EB4FULL); }

static int perf_descriptors(void) {
    DIR *directory = opendir("/proc/self/fd");
    if (!directory) return -1;
    int count = 0;
    struct dirent *entry;
    char path[300], target[64];
    while ((entry = readdir(directory))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", entry->d_name);
        ssize_t length = readlink(path, target, sizeof target - 1);
        if (length <= 0) continue;
        target[length] = 0;
        if (strcmp(target, "anon_inode:[perf_event]") == 0) count++;
    }
    closedir(directory);
    return count;
}

int main(void) {
    double start = thread_cpu_seconds();
    uint64_t checksum = before_close(0.3);
    printf("before close %.3f\n", thread_cpu_seconds() - start);
    printf("parent perf fds %d\n", perf_descriptors());
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(perf_descriptors());
    int status = 0;
    waitpid(child, &status, 0);
    printf("child perf fds %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    fflush(stdout);
    for (int fd = 3; fd < 4096; fd++) close(fd);
    start = thread_cpu_seconds();
    checksum ^= after_close(0.5);
    printf("after close %.3f\n", thread_cpu_seconds() - start);
    printf("checksum %llx\n", (unsigned long long)checksum);
    return 0;
}
