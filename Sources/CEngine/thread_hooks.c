/*
 * pthread_create interposition: a new thread is attached, with its timer
 * armed, before it runs a line of user code, and detached as it ends. In the preload library this definition
 * comes ahead of libc's; in a program linking the library it does as well.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

typedef struct {
    void *(*start)(void *);
    void *argument;
} thread_start;

static pthread_create_fn real_pthread_create(void) {
    static void *_Atomic real;
    return (pthread_create_fn)ss_next_symbol("pthread_create", &real);
}

/* Deletes the thread's timer as it ends (return, pthread_exit or cancellation: the destructor of
 * a thread-specific key, the one key the profiler takes of the program's PTHREAD_KEYS_MAX; a
 * program that took them all first leaves it none, and its threads are then detached at the
 * sampler's next scan) rather than at that scan: a timer of an exited thread never
 * fires again but holds a timer slot and a queued-signal slot (RLIMIT_SIGPENDING) until deleted.
 * A key, not pthread_cleanup_push: the trampoline must end in a tail call to the start routine,
 * so that it is not on the stack. The engine is built with frame pointers, and a frame found
 * through rbp at the root of every thread would end the wall-mode walks of blocked threads,
 * which know only the stack pointer. */
static pthread_key_t ending_key;
static pthread_once_t ending_key_once = PTHREAD_ONCE_INIT;
static int ending_key_ready;

static void detach_ending_thread(void *unused) {
    (void)unused;
    ss_thread_detach_ending();
}

static void create_ending_key(void) { ending_key_ready = pthread_key_create(&ending_key, detach_ending_thread) == 0; }

static void *stacksampler_thread_trampoline(void *opaque) {
    thread_start start = *(thread_start *)opaque;
    free(opaque);
    if (ss_engine_running()) {
        ss_stack_note_current_thread();
        ss_thread_attach(ss_current_tid(), 1);
        ss_sampler_note_new_thread();
        pthread_once(&ending_key_once, create_ending_key);
        if (ending_key_ready) pthread_setspecific(ending_key, (void *)1);
    }
    return start.start(start.argument);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    pthread_create_fn create = real_pthread_create();
    if (!create) return EAGAIN;
    if (!ss_engine_running()) return create(thread, attributes, start, argument);
    thread_start *wrapped = malloc(sizeof *wrapped);
    if (!wrapped) return create(thread, attributes, start, argument);
    *wrapped = (thread_start){start, argument};
    int status = create(thread, attributes, stacksampler_thread_trampoline, wrapped);
    if (status != 0) free(wrapped);
    return status;
}

int ss_spawn_unsampled_thread(pthread_t *thread, void *(*start)(void *), void *argument) {
    pthread_create_fn create = real_pthread_create();
    if (!create) return EAGAIN;
    sigset_t all, previous;
    sigfillset(&all);
    ss_real_sigmask(SIG_SETMASK, &all, &previous);
    int status = create(thread, NULL, start, argument);
    ss_real_sigmask(SIG_SETMASK, &previous, NULL);
    return status;
}
