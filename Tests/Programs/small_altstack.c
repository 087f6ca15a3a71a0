/* Threads with an 8 KiB alternate signal stack, as Rust gives every thread.
 * Each of 3 threads installs its altstack and recurses, burning CPU at the leaves; a
 * SIGUSR1 handler of its own (SA_ONSTACK) burns CPU on the altstack, so that samples also
 * land there. Prints `altstack_kernel_frame BYTES` (the kernel's frame, as the program's
 * handler finds it) and `altstack_used BYTES` (the deepest use of any altstack, found by
 * poisoning them), then `done`. argv[1]: seconds of CPU per thread (default 1). */
#include "workload.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifndef ALTSTACK_BYTES
#define ALTSTACK_BYTES 8192 /* -DALTSTACK_BYTES=65536 measures the handler's stack use with room to walk */
#endif
enum { THREADS = 3, POISON = 0xa5 };

static unsigned char altstacks[THREADS][ALTSTACK_BYTES] __attribute__((aligned(64)));
static volatile uint64_t sink;
static __thread unsigned char *own_altstack;
static volatile uintptr_t kernel_frame;
static double seconds = 1;

SAMPLED_FUNCTION static void on_usr1(int signo) {
    (void)signo;
    kernel_frame = (uintptr_t)(own_altstack + ALTSTACK_BYTES) - (uintptr_t)__builtin_frame_address(0);
    sink += burn_cpu(0.002, 3);
}

SAMPLED_FUNCTION static uint64_t recurse(int depth, uint64_t salt) {
    if (depth == 0) return burn_cpu(0.001, salt);
    return recurse(depth - 1, salt + 1) + 1;
}

SAMPLED_FUNCTION static void *thread_main(void *argument) {
    int index = (int)(uintptr_t)argument;
    own_altstack = altstacks[index];
    memset(own_altstack, POISON, ALTSTACK_BYTES);
    stack_t stack = {.ss_sp = own_altstack, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) { perror("sigaltstack"); exit(1); }
    double end = thread_cpu_seconds() + seconds;
    int round = 0;
    while (thread_cpu_seconds() < end) {
        sink += recurse(40, (uint64_t)index);
        if (++round % 20 == 0) pthread_kill(pthread_self(), SIGUSR1);
    }
    return NULL;
}

static size_t deepest_use(const unsigned char *stack) {
    size_t untouched = 0;
    while (untouched < ALTSTACK_BYTES && stack[untouched] == POISON) untouched++;
    return ALTSTACK_BYTES - untouched;
}

int main(int argc, char **argv) {
    seconds = seconds_argument(argc, argv, 1);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_usr1;
    action.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &action, NULL);
    pthread_t threads[THREADS - 1];
    for (int i = 1; i < THREADS; i++) pthread_create(&threads[i - 1], NULL, thread_main, (void *)(uintptr_t)i);
    thread_main((void *)0);
    for (int i = 1; i < THREADS; i++) pthread_join(threads[i - 1], NULL);
    size_t used = 0;
    for (int i = 0; i < THREADS; i++) if (deepest_use(altstacks[i]) > used) used = deepest_use(altstacks[i]);
    printf("altstack_kernel_frame %lu\naltstack_used %zu\ndone\n", (unsigned long)kernel_frame, used);
    return 0;
}
