/* stall: a thread named "blocker" blocks for argv[1] seconds (default 1) in blocked_wait, then
 * writes `blocker: woke` to stderr and ends; the main thread joins it. With a path in argv[2],
 * the program first closes descriptors 3 to 1023 (as a daemon does) and opens that file (the
 * lowest number, 3), and writes "program\n" to it once the blocker has ended.
 *
 * Build: gcc -O2 -pthread -o stall stall.c */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static double seconds = 1.0;

/* Sleeps until an absolute deadline, so that a profiling signal cannot shorten the sleep. */
SAMPLED_FUNCTION void blocked_wait(void) { sleep_ms(seconds * 1e3); }

static void *blocker(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "blocker");
    blocked_wait();
    fprintf(stderr, "blocker: woke\n");
    return NULL;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1.0);
    int own = -1;
    if (argc > 2) {
        for (int fd = 3; fd < 1024; fd++) close(fd);
        own = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (own < 0) return 2;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, blocker, NULL) != 0) return 1;
    pthread_join(thread, NULL);
    if (own >= 0 && (write(own, "program\n", 8) != 8 || close(own) != 0)) return 3;
    return 0;
}
