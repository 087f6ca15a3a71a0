/*
 * fork() in a process with a sampler thread.
 *
 * The child of a multithreaded process has only the forking thread; every lock
 * another thread held at the fork stays held there forever. The sampler thread
 * takes Swift runtime locks (metadata, hash maps), the loader's lock (its module
 * copy calls dl_iterate_phdr) and the engine's registry lock, so a child that
 * starts a profiler of its own could wait forever on one of them. So the fork
 * waits, in a pthread_atfork prepare handler, until the sampler thread has
 * parked where it holds nothing: right after its sleep, between two ticks.
 * The parent's handler lets it go on; the child, which has no sampler thread,
 * starts afresh. The program's own threads may hold the loader's write lock at
 * the fork: the child checks that one before it starts (loader_lock.c).
 *
 * The sampler says where it is in `state`, a futex word:
 *   NO_SAMPLER -> SAMPLING       ss_sampler_arriving(), before the thread is spawned
 *   SAMPLING   -> PARK_ASKED     fork prepare
 *   PARK_ASKED -> PARKED         the sampler, at its park point
 *   PARK_ASKED/PARKED -> SAMPLING   fork parent (or the prepare handler giving up)
 *   any        -> NO_SAMPLER     ss_sampler_leaving(), as the thread ends
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { NO_SAMPLER = 0, SAMPLING = 1, PARK_ASKED = 2, PARKED = 3 };

/* Longest a fork waits for the sampler to park (it parks within one tick's work). */
static const uint64_t PARK_TIMEOUT_NS = 2000000000u;

static _Atomic uint32_t state;
/* Serialises forks with each other and with a sampler thread being started. */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set by the prepare handler, read by the child: no sampler thread held anything at the fork. */
static int quiesced_at_fork;
static pid_t forking_pid;

static void futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
    struct timespec timeout = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    syscall(SYS_futex, word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, &timeout, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 0x7fffffff, NULL, NULL, 0);
}

void ss_sampler_arriving(void) {
    pthread_mutex_lock(&fork_lock);
    atomic_store(&state, SAMPLING);
    pthread_mutex_unlock(&fork_lock);
}

void ss_sampler_leaving(void) {
    atomic_store(&state, NO_SAMPLER);
    futex_wake_all(&state);
}

void ss_sampler_park_point(void) {
    uint32_t asked = PARK_ASKED;
    if (!atomic_compare_exchange_strong(&state, &asked, PARKED)) return;
    futex_wake_all(&state);
    while (atomic_load(&state) == PARKED) futex_wait(&state, PARKED, PARK_TIMEOUT_NS);
}

/* Back to sampling from a park asked for or reached. */
static void release_sampler(void) {
    uint32_t current = atomic_load(&state);
    while ((current == PARK_ASKED || current == PARKED) &&
           !atomic_compare_exchange_weak(&state, &current, SAMPLING)) {}
    futex_wake_all(&state);
}

void ss_fork_prepare(void) {
    pthread_mutex_lock(&fork_lock);
    forking_pid = getpid();
    uint32_t current = SAMPLING;
    if (!atomic_compare_exchange_strong(&state, &current, PARK_ASKED)) {
        quiesced_at_fork = current == NO_SAMPLER;
        return;
    }
    ss_sampler_request_refresh(); /* ends its sleep; it parks before it refreshes */
    uint64_t deadline = ss_now_ns() + PARK_TIMEOUT_NS;
    for (uint64_t now = ss_now_ns(); atomic_load(&state) == PARK_ASKED && now < deadline; now = ss_now_ns())
        futex_wait(&state, PARK_ASKED, deadline - now);
    current = atomic_load(&state);
    quiesced_at_fork = current == PARKED || current == NO_SAMPLER;
    /* Not parked in time (stuck on a lock the forking thread holds?): let it go. The child
     * then runs no profiler, since a lock the sampler held may be held in it. */
    if (!quiesced_at_fork) release_sampler();
}

void ss_fork_parent(void) {
    release_sampler();
    pthread_mutex_unlock(&fork_lock);
}

int ss_fork_child(pid_t *parent) {
    atomic_store(&state, NO_SAMPLER);
    pthread_mutex_init(&fork_lock, NULL);
    *parent = forking_pid;
    return quiesced_at_fork;
}
