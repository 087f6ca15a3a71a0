/*
 * How far apart in a thread's CPU time the samples of a CPU-time timer come, the only sampler of
 * running code that wall mode has when perf_event_open is refused (docs/design.md, "Wall mode
 * without perf_event_open"). The kernel compares a thread's CPU time with its timers only at a
 * scheduler tick that finds the thread running, so samples are at least a tick of CPU apart;
 * this measures how much further apart they come when other processes share the cores.
 *
 * The main thread runs ROUNDS rounds of 50 ms of CPU and a 200 ms sleep, with a timer of a 1 ms
 * period on its CPU-time clock (SIGEV_THREAD_ID, as the engine arms them). With SPINNERS > 0 that
 * many processes spin on the cores meanwhile; with WAKE_US > 0 a second thread wakes every
 * WAKE_US microseconds and reads the main thread's CPU clock, as the sampler thread does at each
 * tick. Prints the samples taken against the CPU time's worth of ticks, and how many gaps between
 * two samples lasted more than two ticks of CPU, and the longest.
 *
 * Build: gcc -O2 -pthread -o cpu_timer_gaps_probe Scripts/probes/cpu_timer_gaps_probe.c
 * Run:   ./cpu_timer_gaps_probe [ROUNDS [SPINNERS [WAKE_US]]]      (default 6 0 0)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SAMPLES = 1 << 16 };
static int64_t sample_cpu[MAX_SAMPLES];
static volatile int samples;
static volatile int stop;
static pid_t main_tid;
static long wake_us;

static int64_t now_ns(clockid_t clock) {
    struct timespec now;
    clock_gettime(clock, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static void on_sample(int signo) {
    (void)signo;
    if (samples < MAX_SAMPLES) sample_cpu[samples++] = now_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Wakes every wake_us and reads the main thread's CPU clock, as the sampler thread would. */
static void *waker(void *unused) {
    (void)unused;
    const clockid_t target = (clockid_t)(((unsigned int)~main_tid << 3) | 6);
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!stop) {
        next.tv_nsec += wake_us * 1000;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        struct timespec spent;
        clock_gettime(target, &spent);
    }
    return NULL;
}

int main(int argc, char **argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 6;
    const int spinners = argc > 2 ? atoi(argv[2]) : 0;
    wake_us = argc > 3 ? atol(argv[3]) : 0;
    pid_t children[64];
    int started = 0;
    for (; started < spinners && started < 64; started++) {
        children[started] = fork();
        if (children[started] == 0) for (;;) {}
    }
    main_tid = (pid_t)syscall(SYS_gettid);
    sigset_t sampled;
    sigemptyset(&sampled);
    sigaddset(&sampled, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &sampled, NULL); /* the waker inherits it blocked */
    pthread_t thread;
    if (wake_us > 0) pthread_create(&thread, NULL, waker, NULL);
    pthread_sigmask(SIG_UNBLOCK, &sampled, NULL);
    struct sigaction action = {.sa_handler = on_sample, .sa_flags = SA_RESTART};
    sigaction(SIGPROF, &action, NULL);
    struct sigevent event = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
    event._sigev_un._tid = main_tid;
    timer_t timer;
    timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer);
    const struct itimerspec every_ms = {{0, 1000000}, {0, 1000000}};
    timer_settime(timer, 0, &every_ms, NULL);
    for (int round = 0; round < rounds; round++) {
        const int64_t start = now_ns(CLOCK_THREAD_CPUTIME_ID);
        while (now_ns(CLOCK_THREAD_CPUTIME_ID) - start < 50000000) {}
        const struct timespec nap = {0, 200000000};
        nanosleep(&nap, NULL);
    }
    const struct itimerspec off = {{0, 0}, {0, 0}};
    timer_settime(timer, 0, &off, NULL);
    stop = 1;
    if (wake_us > 0) pthread_join(thread, NULL);
    for (int i = 0; i < started; i++) {
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    struct timespec resolution;
    clock_getres(CLOCK_MONOTONIC_COARSE, &resolution);
    const int64_t tick = resolution.tv_nsec, cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
    int wide = 0;
    int64_t widest = 0;
    for (int i = 1; i < samples; i++) {
        const int64_t gap = sample_cpu[i] - sample_cpu[i - 1];
        if (gap > 2 * tick) wide++;
        if (gap > widest) widest = gap;
    }
    printf("spinners %d, waker every %ld us: %d samples for %.1f ms of CPU (%lld ticks' worth); "
           "%d gaps over two ticks of CPU, the longest %.1f ms\n",
           spinners, wake_us, samples, cpu / 1e6, (long long)(cpu / tick), wide, widest / 1e6);
    return 0;
}
