/*
 * Random draws for the engines' first expiries (a thread's first sample at a random point of
 * its first period, so that threads shorter than a period get their fair chance).
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <unistd.h>

/* xorshift64* state, one per thread (threads attach each other at once: thread_registry.c),
 * seeded on a thread's first draw from the time, the pid and the thread: again in a forked
 * child, which would otherwise repeat its parent's draws. */
static SS_TLS uint64_t random_state;
static SS_TLS pid_t seeded_in;

static uint64_t next_random(void) {
    if (random_state == 0 || seeded_in != getpid()) {
        seeded_in = getpid();
        /* splitmix64 of the time and pid: distinct per process, never zero after mixing in 1 */
        uint64_t seed = ss_now_ns() ^ ((uint64_t)getpid() << 32) ^ ((uint64_t)ss_current_tid() << 48);
        seed += 0x9E3779B97F4A7C15ull;
        seed = (seed ^ (seed >> 30)) * 0xBF58476D1CE4E5B9ull;
        seed = (seed ^ (seed >> 27)) * 0x94D049BB133111EBull;
        random_state = (seed ^ (seed >> 31)) | 1;
    }
    random_state ^= random_state >> 12;
    random_state ^= random_state << 25;
    random_state ^= random_state >> 27;
    return random_state * 0x2545F4914F6CDD1Dull;
}

double ss_random_unit(void) { return (double)(next_random() >> 11) * 0x1.0p-53; }

