/* fork_loader N PLUGIN [MAX_HUNG]: forks while other threads hold the loader's lock.
 * Two threads loop dlopen(PLUGIN), dl_iterate_phdr and dlclose (the loader's write lock is
 * held in dl_iterate_phdr) while the main thread forks N children one after another. The main
 * thread keeps PLUGIN open throughout, so that the threads' dlclose never runs its destructors:
 * those take libc's exit-handler lock, which fork does not reset either, and a child forked
 * then would hang in exit() unprofiled. Each child burns
 * ~3 ms of CPU in `child_work`; every fourth one then execs /bin/true, the others exit(0).
 * Each child is waited for at most 5 s; one still running then is hung: it is killed and
 * counted, and after MAX_HUNG (3) hung children no more are forked (the run stays bounded).
 * Prints `worker PID` for each child that exited without exec, then `forked F`, `hung H` and
 * `failed X` (exited otherwise than with 0), one a line.
 * Build: gcc -O2 -pthread -o fork_loader fork_loader.c */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int stopping;
static const char *plugin_path;
static volatile unsigned long sink;

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) void child_work(void) {
    double end = cpu_seconds() + 0.003;
    while (cpu_seconds() < end)
        for (int i = 0; i < 1000; i++) sink += i * sink + 1;
}

/* Looks at each module a little while, as an unwinder searching its tables would: the loader's
 * lock is held for most of the churn threads' time. */
static int count_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    for (int i = 0; i < 40; i++) sink += (unsigned long)info->dlpi_phnum * i;
    ++*(int *)data;
    return 0;
}

static void *churn(void *unused) {
    (void)unused;
    while (!atomic_load(&stopping)) {
        void *plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
        if (!plugin) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            exit(2);
        }
        unsigned long (*work)(unsigned long) = (unsigned long (*)(unsigned long))dlsym(plugin, "plugin_work");
        if (work) sink += work(sink);
        int modules = 0;
        dl_iterate_phdr(count_module, &modules);
        sink += (unsigned long)modules;
        dlclose(plugin);
    }
    return NULL;
}

/* 0 if the child exited with 0, 1 if otherwise, 2 if it was still running after 5 s (killed). */
static int wait_child(pid_t child) {
    double deadline = now_seconds() + 5.0;
    int status;
    for (;;) {
        pid_t done = waitpid(child, &status, WNOHANG);
        if (done == child) return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
        if (done < 0) return 1;
        if (now_seconds() >= deadline) break;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: fork_loader N PLUGIN [MAX_HUNG]\n");
        return 64;
    }
    int count = atoi(argv[1]);
    int max_hung = argc == 4 ? atoi(argv[3]) : 3;
    plugin_path = argv[2];
    if (!dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, churn, NULL);
    int forked = 0, hung = 0, failed = 0;
    for (int i = 0; i < count && hung < max_hung; i++) {
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) {
            failed++;
            continue;
        }
        if (child == 0) {
            child_work();
            if (i % 4 == 3) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(99);
            }
            exit(0);
        }
        forked++;
        int outcome = wait_child(child);
        if (outcome == 2) hung++;
        else if (outcome == 1) failed++;
        else if (i % 4 != 3) printf("worker %d\n", (int)child);
    }
    atomic_store(&stopping, 1);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("forked %d\nhung %d\nfailed %d\n", forked, hung, failed);
    return hung == 0 && failed == 0 ? 0 : 1;
}
