/*
 * key_hoarder [keys-first]: a program that takes every thread-specific key the C library has.
 * It first runs 4 threads (made with pthread_create, so a profiler that interposes it sees
 * them start and end; with `keys-first`, not), then creates keys until pthread_key_create
 * fails, prints "keys N" and the error ("eagain 1" if it was EAGAIN), then runs 4 more threads,
 * each of which sets every key and checks it back, and prints "threads ok" if all did. A
 * profiler that took a key of its own leaves the program one key fewer.
 * Build: gcc -O2 -pthread -o key_hoarder key_hoarder.c
 */
#include "workload.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>

/* Room for more keys than the C library gives, so the loop ends at its refusal. */
static pthread_key_t keys[PTHREAD_KEYS_MAX + 8];
static int key_count;

SAMPLED_FUNCTION static void *work(void *argument) {
    (void)argument;
    burn_cpu(0.02, 0x9E3779B97F4A7C15ULL);
    return NULL;
}

SAMPLED_FUNCTION static void *use_every_key(void *argument) {
    (void)argument;
    for (int i = 0; i < key_count; i++) pthread_setspecific(keys[i], &keys[i]);
    burn_cpu(0.02, 0xC2B2AE3D27D4EB4FULL);
    for (int i = 0; i < key_count; i++)
        if (pthread_getspecific(keys[i]) != &keys[i]) return (void *)1;
    return NULL;
}

/* Runs `count` threads of `start` and joins them; the number whose result was not NULL. */
static int run_threads(int count, void *(*start)(void *)) {
    pthread_t threads[8];
    int failed = 0;
    for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, start, NULL);
    for (int i = 0; i < count; i++) {
        void *result = NULL;
        pthread_join(threads[i], &result);
        failed += result != NULL;
    }
    return failed;
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "keys-first") != 0) run_threads(4, work);
    int status = 0;
    while (key_count < PTHREAD_KEYS_MAX + 8 && (status = pthread_key_create(&keys[key_count], NULL)) == 0) key_count++;
    printf("keys %d\n", key_count);
    printf("eagain %d\n", status == EAGAIN);
    printf("threads %s\n", run_threads(4, use_every_key) == 0 ? "ok" : "failed");
    return 0;
}
