/*
 * A program that needs its descriptors: `fd_headroom THREADS FILES` works 0.1 s of CPU (so
 * that a profiler started with it has settled its engine), starts THREADS threads that wait
 * (with a profiler they each get what the engine gives a thread, made as they are created),
 * then opens /dev/null FILES times (0: until the descriptor limit refuses), and select()s on
 * the highest descriptor it got. Built with _FORTIFY_SOURCE, so an FD_SET past FD_SETSIZE
 * aborts, as it does in Debian's packages (without it, it writes past the fd_set).
 *
 * prints: opened N / highest H / select R
 */
#include "workload.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

SAMPLED_FUNCTION uint64_t settle(double seconds) { return burn_cpu(seconds, 0x9E3779B97F4A7C15ULL); }

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_changed = PTHREAD_COND_INITIALIZER;
static int done;

static void *wait_until_done(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&done_changed, &lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    int thread_count = argc > 1 ? atoi(argv[1]) : 0;
    int file_count = argc > 2 ? atoi(argv[2]) : 0;
    uint64_t checksum = settle(0.1);
    pthread_t *threads = calloc((size_t)thread_count, sizeof *threads);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    for (int i = 0; i < thread_count; i++) {
        int error = pthread_create(&threads[i], &attributes, wait_until_done, NULL);
        if (error) {
            printf("pthread_create %d: %s\n", i, strerror(error));
            return 2;
        }
    }
    int opened = 0, highest = -1, error = 0;
    while (file_count == 0 || opened < file_count) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0) {
            error = errno;
            break;
        }
        opened++;
        if (fd > highest) highest = fd;
    }
    printf("opened %d\n", opened);
    if (error && file_count) printf("open: %s\n", strerror(error));
    printf("highest %d\n", highest);
    fflush(stdout);
    fd_set readable;
    FD_ZERO(&readable);
    FD_SET(highest, &readable);
    struct timeval now = {0, 0};
    printf("select %d\n", select(highest + 1, &readable, NULL, NULL, &now));
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&done_changed);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < thread_count; i++) pthread_join(threads[i], NULL);
    printf("checksum %llx\n", (unsigned long long)checksum);
    return 0;
}
