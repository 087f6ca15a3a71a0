/*
 * The demo program profiled by Scripts/demo.sh: a small "server" with four
 * named threads and known hot functions.
 *   main thread:  handle_requests -> parse_request (30%) / render_response (70%)
 *   "compress":   compress_block, CPU-bound
 *   "checksum" x2: checksum_page, CPU-bound
 *   "logger":     mostly asleep in flush_logs (visible in wall mode only)
 * Build: gcc -O2 -pthread demo.c -o demo; run: ./demo [seconds]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 3.0;
static volatile uint64_t sink;

static double elapsed_since(const struct timespec *start) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

__attribute__((noinline)) static uint64_t mix(uint64_t x, int rounds) {
    for (int i = 0; i < rounds; i++) x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

__attribute__((noinline)) static void parse_request(uint64_t seed) { sink += mix(seed, 300000); }
__attribute__((noinline)) static void render_response(uint64_t seed) { sink += mix(seed ^ 0x55, 700000); }

__attribute__((noinline)) static void handle_requests(void) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (uint64_t request = 0; elapsed_since(&start) < seconds; request++) {
        parse_request(request);
        render_response(request);
    }
}

__attribute__((noinline)) static void compress_block(uint64_t seed) { sink += mix(seed * 3, 500000); }
__attribute__((noinline)) static void checksum_page(uint64_t seed) { sink += mix(seed * 7, 400000); }

__attribute__((noinline)) static void flush_logs(void) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    sink += mix(sink, 1000);
}

static void *compressor(void *unused) {
    (void)unused;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (uint64_t block = 0; elapsed_since(&start) < seconds; block++) compress_block(block);
    return NULL;
}

static void *checksummer(void *unused) {
    (void)unused;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (uint64_t page = 0; elapsed_since(&start) < seconds; page++) checksum_page(page);
    return NULL;
}

static void *logger(void *unused) {
    (void)unused;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (elapsed_since(&start) < seconds) flush_logs();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) seconds = atof(argv[1]);
    pthread_t threads[4];
    void *(*bodies[4])(void *) = {compressor, checksummer, checksummer, logger};
    const char *names[4] = {"compress", "checksum", "checksum", "logger"};
    for (int i = 0; i < 4; i++) {
        pthread_create(&threads[i], NULL, bodies[i], NULL);
        pthread_setname_np(threads[i], names[i]);
    }
    handle_requests();
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    printf("demo done (%llu)\n", (unsigned long long)(sink & 0xff));
    return 0;
}
