/*
 * pthread_create interposition: a new thread is attached, with its timer
 * armed, before it runs a line of user code, and detached as it ends. In the preload library this definition
 * comes ahead of libc's; in a program linking the library it does as well.
 *
 * The profiler's own threads are made with the real pthread_create, so the C library counts
 * them among the process's threads, and it ends the process (exit(0)) only when the last of
 * those ends: a program whose main thread calls pthread_exit, and whose other threads then end,
 * would never exit. So while profiler threads live, every program thread made through this
 * hook, and the main thread once it has started one, runs a check as it ends: if the main
 * thread has ended and no other thread but the profiler's is left, it calls exit(0), as the C
 * library would have (the session then stops and its profile is written). The main thread's
 * pthread_exit is interposed to run that check too.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Profiler threads started (ss_spawn_unsampled_thread) and not yet returned. */
static _Atomic int profiler_threads;
/* Whether the main thread has ended (pthread_exit) while profiler threads lived. */
static _Atomic int main_thread_ended;
/* Program threads in thread_ends now, and whether one of them has called exit(0). */
static _Atomic int threads_ending;
static _Atomic int exit_claimed;

/* Whether the task `tid` of this process has ended (a zombie, as the main thread stays after
 * pthread_exit until the process ends); unreadable (gone): yes. */
static int task_ended(int tid) {
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    ss_file_identity identity;
    int fd = ss_borrowed_open(path, 0, &identity);
    if (fd < 0) return 1;
    ssize_t length = pread(fd, stat, sizeof stat - 1, 0);
    ss_borrowed_close(fd, &identity);
    if (length <= 0) return 1;
    stat[length] = 0;
    const char *state = strrchr(stat, ')'); /* the name in parentheses may hold anything */
    return state && (state[2] == 'Z' || state[2] == 'X');
}

/* Threads of this process other than the caller that have not ended, by /proc/self/task;
 * -1 if it cannot be read. */
static int other_threads_alive(void) {
    ss_file_identity identity;
    int fd = ss_borrowed_open("/proc/self/task", O_DIRECTORY, &identity);
    if (fd < 0) return -1;
    int alive = 0;
    int32_t self = ss_current_tid();
    char buffer[4096];
    long count;
    while ((count = ss_borrowed_read_directory(fd, &identity, buffer, sizeof buffer)) > 0) {
        for (long offset = 0; offset < count;) {
            const struct dirent64 *entry = (const struct dirent64 *)(buffer + offset);
            offset += entry->d_reclen;
            int tid = atoi(entry->d_name);
            if (tid > 0 && tid != self && !task_ended(tid)) alive++;
        }
    }
    ss_borrowed_close(fd, &identity);
    return count < 0 ? -1 : alive;
}

/* A program thread ends: detached from the session, and the process ended as the C library
 * would end it were the profiler's threads not counted (see the top of this file): when the
 * main thread has ended and every other thread left is the profiler's, or a program thread
 * ending too (of those, the first to see it calls exit). */
static void thread_ends(void *unused) {
    (void)unused;
    ss_thread_detach_ending();
    if (ss_current_tid() == getpid()) atomic_store(&main_thread_ended, 1);
    if (!atomic_load(&main_thread_ended) || atomic_load(&profiler_threads) == 0) return;
    int ending = atomic_fetch_add(&threads_ending, 1) + 1;
    int alive = other_threads_alive();
    if (alive >= 0 && alive <= atomic_load(&profiler_threads) + ending - 1 && !atomic_exchange(&exit_claimed, 1)) exit(0);
    atomic_fetch_sub(&threads_ending, 1);
}

static void create_ending_key(void) { ending_key_ready = pthread_key_create(&ending_key, thread_ends) == 0; }

/* The calling thread runs thread_ends as it ends. */
static void watch_thread_end(void) {
    pthread_once(&ending_key_once, create_ending_key);
    if (ending_key_ready) pthread_setspecific(ending_key, (void *)1);
}

static void *stacksampler_thread_trampoline(void *opaque) {
    thread_start start = *(thread_start *)opaque;
    free(opaque);
    if (ss_engine_running()) {
        ss_stack_note_current_thread();
        ss_thread_attach(ss_current_tid(), 1);
        ss_sampler_note_new_thread();
    }
    watch_thread_end();
    return start.start(start.argument);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    pthread_create_fn create = real_pthread_create();
    if (!create) return EAGAIN;
    if (!ss_engine_running() && atomic_load(&profiler_threads) == 0) return create(thread, attributes, start, argument);
    thread_start *wrapped = malloc(sizeof *wrapped);
    if (!wrapped) return create(thread, attributes, start, argument);
    *wrapped = (thread_start){start, argument};
    int status = create(thread, attributes, stacksampler_thread_trampoline, wrapped);
    if (status != 0) free(wrapped);
    return status;
}

/* The main thread ending by pthread_exit while profiler threads live runs thread_ends too (its
 * key taken only then: a program that took every key loses none to the profiler at its start);
 * without a key, it ends the process at once if no other thread of the program is left. */
void pthread_exit(void *value) {
    static void *_Atomic real_symbol;
    void (*real)(void *) = (void (*)(void *))ss_next_symbol("pthread_exit", &real_symbol);
    if (ss_current_tid() == getpid() && atomic_load(&profiler_threads) > 0) {
        watch_thread_end();
        if (!ending_key_ready) {
            atomic_store(&main_thread_ended, 1);
            int alive = other_threads_alive();
            if (alive >= 0 && alive <= atomic_load(&profiler_threads) && !atomic_exchange(&exit_claimed, 1)) exit(0);
        }
    }
    if (real) real(value);
    syscall(SYS_exit, 0); /* not reached: pthread_exit does not return */
    __builtin_unreachable();
}

/* A profiler thread: counted among profiler_threads while it runs its start routine. */
static void *profiler_thread_trampoline(void *opaque) {
    thread_start start = *(thread_start *)opaque;
    free(opaque);
    void *result = start.start(start.argument);
    atomic_fetch_sub(&profiler_threads, 1);
    return result;
}

int ss_spawn_unsampled_thread(pthread_t *thread, void *(*start)(void *), void *argument) {
    pthread_create_fn create = real_pthread_create();
    if (!create) return EAGAIN;
    thread_start *wrapped = malloc(sizeof *wrapped);
    if (!wrapped) return EAGAIN;
    *wrapped = (thread_start){start, argument};
    atomic_fetch_add(&profiler_threads, 1);
    sigset_t all, previous;
    sigfillset(&all);
    ss_real_sigmask(SIG_SETMASK, &all, &previous);
    int status = create(thread, NULL, profiler_thread_trampoline, wrapped);
    ss_real_sigmask(SIG_SETMASK, &previous, NULL);
    if (status != 0) {
        atomic_fetch_sub(&profiler_threads, 1);
        free(wrapped);
    }
    return status;
}

int ss_main_thread_ended(void) { return atomic_load(&main_thread_ended); }

void ss_profiler_threads_forget_after_fork(void) {
    atomic_store(&profiler_threads, 0);
    atomic_store(&main_thread_ended, 0);
    atomic_store(&threads_ending, 0);
    atomic_store(&exit_claimed, 0);
}
