/* handoff: two threads that hand a token back and forth through a futex, as a work queue's
 * producer and consumer do, for argv[1] seconds (default 3); thousands of context switches a
 * second each. Between handings each thread spins argv[2] microseconds (default 20) in
 * `handoff_spin`, and waits for the token in `handoff_wait`. Prints `handings N` and, as each
 * thread timed them by its own clock, `spin_ms` and `wait_ms` summed over both threads.
 *
 * Build: gcc -O2 -pthread -o handoff handoff.c */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint32_t token;
static _Atomic int stop;
static _Atomic long handings;
static double spin_us = 20;
static _Atomic uint64_t spin_ns_total, wait_ns_total;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void handoff_spin(void) {
    uint64_t end = now_ns() + (uint64_t)(spin_us * 1000);
    while (now_ns() < end) {
    }
}

/* Waits until the token is `mine` (or the run is over); false when it is over. */
__attribute__((noinline)) static int handoff_wait(uint32_t mine) {
    uint32_t seen;
    while ((seen = atomic_load(&token)) != mine) {
        if (atomic_load(&stop)) return 0;
        struct timespec bound = {0, 50 * 1000 * 1000}; /* so that the end is seen */
        syscall(SYS_futex, &token, FUTEX_WAIT_PRIVATE, seen, &bound, NULL, 0);
    }
    return 1;
}

static void *hand_back_and_forth(void *argument) {
    uint32_t mine = (uint32_t)(uintptr_t)argument;
    uint64_t spun = 0, waited = 0;
    for (;;) {
        uint64_t start = now_ns();
        int going = handoff_wait(mine);
        uint64_t got = now_ns();
        waited += got - start;
        if (!going) break;
        handoff_spin();
        spun += now_ns() - got;
        atomic_fetch_add(&handings, 1);
        atomic_store(&token, mine ^ 1);
        syscall(SYS_futex, &token, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    atomic_fetch_add(&spin_ns_total, spun);
    atomic_fetch_add(&wait_ns_total, waited);
    return NULL;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 3;
    if (argc > 2) spin_us = atof(argv[2]);
    if (seconds <= 0 || seconds > 600 || spin_us < 0 || spin_us > 100000) {
        fprintf(stderr, "usage: handoff [seconds 0..600] [spin microseconds 0..100000]\n");
        return 2;
    }
    pthread_t threads[2];
    for (uintptr_t i = 0; i < 2; i++) pthread_create(&threads[i], NULL, hand_back_and_forth, (void *)i);
    struct timespec run = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&run, &run) != 0) {
    }
    atomic_store(&stop, 1);
    atomic_store(&token, 2); /* nobody's: both see the end */
    syscall(SYS_futex, &token, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("handings %ld\nspin_ms %.1f\nwait_ms %.1f\n", atomic_load(&handings), (double)spin_ns_total / 1e6, (double)wait_ns_total / 1e6);
    return 0;
}
