/*
 * A daemon's descriptor hygiene meeting the profiler's daemon. Closes every descriptor from 3
 * to 1023 (as daemons do), makes 8 pipes of its own (which take the lowest free numbers, those
 * the profiler's server had), passes 300 numbered messages through them (a writer thread, the
 * main thread reading), closes them, then sleeps 2 s and measures the whole process's CPU time
 * over that sleep (every thread's: the profiler's server thread spinning would show there).
 *
 * prints: received N of 300 / cpu during sleep S (seconds)
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PIPES 8
#define MESSAGES 300

static int pipes[PIPES][2];

static void *writer(void *unused) {
    (void)unused;
    for (int i = 0; i < MESSAGES; i++) {
        char message[16];
        snprintf(message, sizeof message, "m%04d\n", i);
        if (write(pipes[i % PIPES][1], message, 6) != 6) break;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static double process_cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

int main(void) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
    for (int i = 0; i < PIPES; i++) {
        if (pipe(pipes[i]) != 0) {
            perror("pipe");
            return 2;
        }
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, writer, NULL) != 0) return 2;
    int received = 0;
    for (int i = 0; i < MESSAGES; i++) {
        char message[7] = {0};
        size_t got = 0;
        while (got < 6) {
            struct pollfd ready = {pipes[i % PIPES][0], POLLIN, 0};
            if (poll(&ready, 1, 2000) != 1) break; /* taken by someone else: not waiting for ever */
            ssize_t n = read(pipes[i % PIPES][0], message + got, 6 - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        char expected[16];
        snprintf(expected, sizeof expected, "m%04d\n", i);
        if (got == 6 && memcmp(message, expected, 6) == 0) received++;
    }
    printf("received %d of %d\n", received, MESSAGES);
    fflush(stdout);
    pthread_join(thread, NULL);
    for (int i = 0; i < PIPES; i++) {
        close(pipes[i][0]);
        close(pipes[i][1]);
    }
    double before = process_cpu_seconds();
    sleep(2);
    printf("cpu during sleep %.3f\n", process_cpu_seconds() - before);
    fflush(stdout);
    return 0;
}
