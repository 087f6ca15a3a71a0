/*
 * Attached threads, each with the handle the session's engine made for it
 * (sampling_engine.h). Never touched in signal context, so a mutex guards it.
 * While arming is deferred (the engine's start left the unwind tables to the
 * sampler thread), threads are attached unarmed and armed all together later; while the
 * engine is only presumed (engine.c), they are merely noted (handle -1) and attached, armed,
 * by the engine settled by then.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    int32_t tid;
    int handle; /* the engine's: a timer id or a counter's descriptor in cpu mode, -1 when none */
} attached_thread;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static attached_thread *threads;
static size_t thread_count, thread_capacity;
/* The session's engine; NULL while closed (no session): attaches are refused. */
static const ss_sampling_engine *engine;
/* Threads are attached unarmed until the sampler thread has the core unwind tables (engine.c). */
static int arming_deferred;
/* The engine is presumed, not yet settled: attaches only note the thread. */
static int engine_presumed;
/* Attaches refused because the process had no file descriptor left (the perf engine's counters). */
static _Atomic uint64_t descriptor_refusals;

uint64_t ss_thread_descriptor_refusals(void) { return atomic_load(&descriptor_refusals); }

clockid_t ss_thread_cpu_clock(int32_t tid) {
    return (clockid_t)(((unsigned int)~tid << 3) | 6);
}

int64_t ss_thread_cpu_time_ns(int32_t tid) {
    struct timespec spent;
    if (clock_gettime(ss_thread_cpu_clock(tid), &spent) != 0) return -1;
    return (int64_t)spent.tv_sec * 1000000000 + spent.tv_nsec;
}

static void release(attached_thread *thread) {
    if (thread->handle >= 0) engine->detach(thread->handle);
    *thread = threads[--thread_count];
}

static int engine_attach(int32_t tid, int armed, int *handle) {
    int result = engine->attach(tid, armed, handle);
    if (result == -EMFILE || result == -ENFILE) atomic_fetch_add(&descriptor_refusals, 1);
    return result;
}

static attached_thread *find(int32_t tid) {
    for (size_t i = 0; i < thread_count; i++)
        if (threads[i].tid == tid) return &threads[i];
    return NULL;
}

int ss_thread_attach(int32_t tid, int replace) {
    int result = 0;
    pthread_mutex_lock(&registry_lock);
    if (!engine) { /* no session (or stopped meanwhile): a timer made now would outlive it */
        pthread_mutex_unlock(&registry_lock);
        return -ESRCH;
    }
    attached_thread *existing = find(tid);
    if (existing && replace) { release(existing); existing = NULL; }
    if (!existing) {
        if (thread_count == thread_capacity) {
            size_t capacity = thread_capacity ? thread_capacity * 2 : 64;
            attached_thread *grown = realloc(threads, capacity * sizeof *grown);
            if (!grown) { pthread_mutex_unlock(&registry_lock); return -ENOMEM; }
            threads = grown;
            thread_capacity = capacity;
        }
        int handle = -1;
        result = engine_presumed ? 0 : engine_attach(tid, !arming_deferred, &handle);
        if (result == 0) threads[thread_count++] = (attached_thread){tid, handle};
    }
    pthread_mutex_unlock(&registry_lock);
    return result;
}

void ss_thread_detach(int32_t tid) {
    pthread_mutex_lock(&registry_lock);
    attached_thread *thread = find(tid);
    if (thread) release(thread);
    pthread_mutex_unlock(&registry_lock);
}

int ss_thread_timer_orphaned(int32_t tid) {
    pthread_mutex_lock(&registry_lock);
    attached_thread *thread = find(tid);
    int orphaned = thread && thread->handle >= 0 && engine->orphaned(thread->handle);
    pthread_mutex_unlock(&registry_lock);
    return orphaned;
}

size_t ss_thread_list(int32_t *tids, size_t capacity) {
    pthread_mutex_lock(&registry_lock);
    size_t count = thread_count;
    for (size_t i = 0; i < count && i < capacity; i++) tids[i] = threads[i].tid;
    pthread_mutex_unlock(&registry_lock);
    return count;
}

void ss_registry_forget_after_fork(void) {
    /* The child has only the forking thread; the lock may have been held by a thread that
     * does not exist here. What the engine holds for the parent's threads goes. */
    pthread_mutex_init(&registry_lock, NULL);
    for (size_t i = 0; i < thread_count; i++)
        if (engine && threads[i].handle >= 0) engine->forget_after_fork(threads[i].handle);
    thread_count = 0;
    engine = NULL;
    arming_deferred = 0;
    engine_presumed = 0;
}

void ss_registry_open(const ss_sampling_engine *session_engine, int deferred, int presumed) {
    pthread_mutex_lock(&registry_lock);
    engine = session_engine;
    arming_deferred = deferred;
    engine_presumed = deferred && presumed;
    pthread_mutex_unlock(&registry_lock);
}

void ss_registry_arm_deferred(const ss_sampling_engine *settled) {
    pthread_mutex_lock(&registry_lock);
    if (arming_deferred && engine) {
        arming_deferred = 0;
        if (engine_presumed) {
            /* Noted threads hold nothing yet: the settled engine attaches them, armed. */
            engine_presumed = 0;
            engine = settled;
            for (size_t i = 0; i < thread_count;) {
                if (engine_attach(threads[i].tid, 1, &threads[i].handle) != 0) threads[i] = threads[--thread_count];
                else i++;
            }
        } else {
            /* A thread whose timer cannot be armed leaves the registry, as after a failed
             * attach: the next scan attaches it again. */
            for (size_t i = 0; i < thread_count;) {
                if (threads[i].handle >= 0 && engine->arm(threads[i].handle) != 0) release(&threads[i]);
                else i++;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

void ss_registry_close(void) {
    pthread_mutex_lock(&registry_lock);
    while (thread_count > 0) release(&threads[0]);
    engine = NULL;
    arming_deferred = 0;
    engine_presumed = 0;
    pthread_mutex_unlock(&registry_lock);
}
