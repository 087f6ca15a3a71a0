/*
 * pthread_create interposition: a new thread is attached, with its timer
 * armed, before it runs a line of user code, and detached as it ends. In the preload library this definition
 * comes ahead of libc's; in a program linking the library it does as well.
 *
 * The profiler's own threads are made with the real pthread_create, so the C library counts
 * them among the process's threads, and it ends the process (exit(0)) only when the last of
 * those ends: a program whose main thread calls pthread_exit, and whose other threads then end,
 * would never exit. So while profiler threads live, every program thread made through this
 * hook, and the main thread as it calls pthread_exit, runs a check as it ends: if the main
 * thread has ended and no other thread is left but the profiler's and program threads that have
 * reached their end (each known by tid and start time, so that a later thread on a reused tid is
 * not taken for them), it calls exit(0), as the C library would have (the session then stops and
 * its profile is written). Whatever cannot be known counts as a program thread still running:
 * the worst outcome of a doubt is the old one, a process that does not end, never an early exit. The main thread's
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
/* Whether the main thread has ended (pthread_exit) while profiler threads lived, and whether a
 * thread has called exit(0) for the process. */
static _Atomic int main_thread_ended;
static _Atomic int exit_claimed;

/* A task of this process, told from a later one on the same tid by its start time. */
typedef struct {
    int32_t tid;
    uint64_t start;
} task_identity;

/* Tasks that are not the program's to count: the profiler's threads while they run, and program
 * threads that have reached their end (thread_ends), which may take a while longer to be gone.
 * Bounded; a task left out when it is full counts as the program's (the safe side: no exit). */
enum { UNCOUNTED_CAPACITY = 256 };
static pthread_mutex_t uncounted_lock = PTHREAD_MUTEX_INITIALIZER;
static task_identity uncounted[UNCOUNTED_CAPACITY];
static int uncounted_count;

/* What /proc says of task `tid`: 1 alive (its start time in `*start`), 0 ended (gone, or a
 * zombie as the main thread stays after pthread_exit), -1 not known (then taken for alive). */
static int task_state(int tid, uint64_t *start) {
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    ss_file_identity identity;
    int fd = ss_borrowed_open(path, 0, &identity);
    if (fd < 0) return errno == ENOENT || errno == ESRCH ? 0 : -1;
    ssize_t length = pread(fd, stat, sizeof stat - 1, 0);
    int error = errno;
    ss_borrowed_close(fd, &identity);
    if (length <= 0) return length == 0 || error == ESRCH ? 0 : -1;
    stat[length] = 0;
    const char *field = strrchr(stat, ')'); /* the name in parentheses may hold anything */
    if (!field || field[1] != ' ') return -1;
    if (field[2] == 'Z' || field[2] == 'X') return 0;
    /* The start time is the 22nd field, the 20th after the name. */
    for (int skipped = 0; skipped < 20 && field; skipped++) field = strchr(field + 1, ' ');
    if (!field) return -1;
    *start = strtoull(field + 1, NULL, 10);
    return 1;
}

static void note_uncounted(int32_t tid) {
    task_identity task = {tid, 0};
    if (task_state(tid, &task.start) != 1) return;
    pthread_mutex_lock(&uncounted_lock);
    if (uncounted_count == UNCOUNTED_CAPACITY) { /* make room: forget the tasks that are gone */
        int kept = 0;
        for (int i = 0; i < uncounted_count; i++) {
            uint64_t start = 0;
            if (task_state(uncounted[i].tid, &start) != 0 && start == uncounted[i].start) uncounted[kept++] = uncounted[i];
        }
        uncounted_count = kept;
    }
    if (uncounted_count < UNCOUNTED_CAPACITY) uncounted[uncounted_count++] = task;
    pthread_mutex_unlock(&uncounted_lock);
}

static void forget_uncounted(int32_t tid) {
    pthread_mutex_lock(&uncounted_lock);
    for (int i = 0; i < uncounted_count; i++) {
        if (uncounted[i].tid == tid) uncounted[i] = uncounted[--uncounted_count];
    }
    pthread_mutex_unlock(&uncounted_lock);
}

static int is_uncounted(task_identity task) {
    pthread_mutex_lock(&uncounted_lock);
    int found = 0;
    for (int i = 0; i < uncounted_count && !found; i++) found = uncounted[i].tid == task.tid && uncounted[i].start == task.start;
    pthread_mutex_unlock(&uncounted_lock);
    return found;
}

/* Whether a thread of the program other than the caller may still run: one listed in
 * /proc/self/task that has not ended and is none of the uncounted; yes when in doubt. */
static int program_thread_left(void) {
    ss_file_identity identity;
    int fd = ss_borrowed_open("/proc/self/task", O_DIRECTORY, &identity);
    if (fd < 0) return 1;
    int left = 0;
    int32_t self = ss_current_tid();
    char buffer[4096];
    long count;
    while (!left && (count = ss_borrowed_read_directory(fd, &identity, buffer, sizeof buffer)) > 0) {
        for (long offset = 0; offset < count && !left;) {
            const struct dirent64 *entry = (const struct dirent64 *)(buffer + offset);
            offset += entry->d_reclen;
            task_identity task = {atoi(entry->d_name), 0};
            if (task.tid <= 0 || task.tid == self) continue;
            int state = task_state(task.tid, &task.start);
            left = state < 0 || (state == 1 && !is_uncounted(task));
        }
    }
    ss_borrowed_close(fd, &identity);
    return left || count < 0;
}

/* Ends the process as the C library would, if the main thread has ended and no other thread of
 * the program is left (one caller only). */
static void exit_if_last(void) {
    if (!atomic_load(&main_thread_ended) || atomic_load(&profiler_threads) == 0 || program_thread_left()) return;
    if (!atomic_exchange(&exit_claimed, 1)) exit(0);
}

/* A program thread ends: detached from the session, and the process ended as the C library
 * would end it were the profiler's threads not counted (see the top of this file). Run in two
 * rounds of the thread's key destructors: the check comes in the second, after the program's
 * own destructors of the first. */
static void thread_ends(void *round) {
    if (round == (void *)1) {
        ss_thread_detach_ending();
        if (ss_current_tid() == getpid()) atomic_store(&main_thread_ended, 1);
        if (atomic_load(&profiler_threads) > 0) pthread_setspecific(ending_key, (void *)2);
        return;
    }
    /* The main thread may have ended meanwhile: checked in this round, not the first. */
    if (!atomic_load(&main_thread_ended)) return;
    note_uncounted(ss_current_tid());
    exit_if_last();
}

static void create_ending_key(void) { ending_key_ready = pthread_key_create(&ending_key, thread_ends) == 0; }

/* The calling thread runs thread_ends as it ends. */
static void watch_thread_end(void) {
    pthread_once(&ending_key_once, create_ending_key);
    if (ending_key_ready) pthread_setspecific(ending_key, (void *)1);
}

SS_PASSTHROUGH static void *stacksampler_thread_trampoline(void *opaque) {
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

SS_INTERPOSER int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
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
SS_INTERPOSER void pthread_exit(void *value) {
    static void *_Atomic real_symbol;
    void (*real)(void *) = (void (*)(void *))ss_next_symbol("pthread_exit", &real_symbol);
    if (ss_current_tid() == getpid() && atomic_load(&profiler_threads) > 0) {
        watch_thread_end();
        if (!ending_key_ready) {
            atomic_store(&main_thread_ended, 1);
            exit_if_last();
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
    note_uncounted(ss_current_tid());
    void *result = start.start(start.argument);
    forget_uncounted(ss_current_tid());
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
    atomic_store(&exit_claimed, 0);
    pthread_mutex_init(&uncounted_lock, NULL);
    uncounted_count = 0;
}
