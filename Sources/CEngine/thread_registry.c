/*
 * Attached threads, each with the handle the session's engine made for it
 * (sampling_engine.h), and whether it blocks the engine's signal (then it is disarmed and
 * never signalled: mask_hooks.c). A mutex guards it, taken with every signal blocked, since a
 * program's handler may change its mask (and so reach the registry) on any thread.
 * While arming is deferred (the engine's start left the unwind tables to the
 * sampler thread), threads are attached unarmed and armed all together later; while the
 * engine is only presumed (engine.c), they are merely noted (handle -1) and attached, armed,
 * by the engine settled by then.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int32_t tid;
    int handle; /* the engine's: a timer id or a counter's descriptor in cpu mode, -1 when none */
    int blocked; /* the thread blocks the engine's signal: disarmed, and never signalled */
    uint64_t attached_ns; /* when the attach began (CLOCK_MONOTONIC) */
} attached_thread;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
/* Threads that detached themselves as they ended, with the moment and their CPU time then, until
 * the sampler thread takes them (ss_thread_take_ended); under the lock. Past the bound (that
 * many thread ends between two wakes of the sampler) an end is not noted. */
enum { ENDED_CAPACITY = 256 };
static ss_ended_thread ended_threads[ENDED_CAPACITY];
static size_t ended_count;
/* Attached threads that block the engine's signal (written under the lock, read without). */
static _Atomic size_t blocked_count;
static attached_thread *threads;
static size_t thread_count, thread_capacity;
/* The session's engine; NULL while closed (no session): attaches are refused. */
static const ss_sampling_engine *engine;
/* Threads are attached unarmed until the sampler thread has the core unwind tables (engine.c). */
static int arming_deferred;
/* The engine is presumed, not yet settled: attaches only note the thread. */
static int engine_presumed;
/* Counts the sessions opened, and the changes of a thread's mask noted: an attach that let the
 * lock go knows whether its session still runs, and whether its thread's mask may have changed. */
static uint64_t session_epoch, mask_changes;
/* Attaches refused because the process had no file descriptor left (the perf engine's counters). */
static _Atomic uint64_t descriptor_refusals;

/* The registry's lock is taken with every signal blocked on the taking thread, `saved` its
 * mask before: a handler of the program's that changes its mask (mask_hooks.c) never runs on
 * a thread that holds the lock. The profiler's own threads keep their mask as it is (two
 * system calls saved per call, which the sampler makes per thread per tick): the mask hooks
 * pass their calls straight to libc, so nothing on them waits for the lock in a handler. */
static void lock_registry(sigset_t *saved) {
    if (!ss_tls_excluded) {
        sigset_t all;
        sigfillset(&all);
        ss_real_sigmask(SIG_BLOCK, &all, saved);
    }
    pthread_mutex_lock(&registry_lock);
}

/* Lets the lock go, and sets the thread's mask to `mask` (a program's thread only). */
static void unlock_registry(const sigset_t *mask) {
    pthread_mutex_unlock(&registry_lock);
    if (!ss_tls_excluded) ss_real_sigmask(SIG_SETMASK, mask, NULL);
}

uint64_t ss_thread_descriptor_refusals(void) { return atomic_load(&descriptor_refusals); }

/* Takes `thread` out of the table (under the lock); returns its engine handle (or -1), which
 * the caller detaches once it has let the lock go. */
static int release(attached_thread *thread) {
    int handle = thread->handle;
    if (thread->blocked) blocked_count--;
    *thread = threads[--thread_count];
    return handle;
}

int ss_thread_blocks_signal(int32_t tid, int signo) {
    if (signo <= 0 || signo > 64) return 0;
    char path[64], status[4096];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    ss_file_identity identity;
    int fd = ss_borrowed_open(path, 0, &identity);
    if (fd < 0) return -1;
    ssize_t length = pread(fd, status, sizeof status - 1, 0);
    ss_borrowed_close(fd, &identity);
    if (length <= 0) return -1;
    status[length] = 0;
    const char *line = strstr(status, "\nSigBlk:");
    if (!line) return -1;
    unsigned long long mask = strtoull(line + strlen("\nSigBlk:"), NULL, 16);
    return (int)((mask >> (signo - 1)) & 1);
}

/* Whether thread `tid` blocks the engine's signal now: for the calling thread, its mask
 * before it took the registry's lock (`own_mask`), for another its `SigBlk` in /proc (0 if it
 * cannot be read: the thread is gone). */
static int blocks_engine_signal(int32_t tid, const sigset_t *own_mask) {
    int signo = ss_engine_signal();
    if (tid == ss_current_tid()) return signo > 0 && sigismember(own_mask, signo) == 1;
    return ss_thread_blocks_signal(tid, signo) == 1;
}

/* Notes whether `thread` blocks the engine's signal; its timer or counter is disarmed while
 * it does, and armed again when it stops (unless arming is deferred: then at the deferred arming). */
static void set_blocked(attached_thread *thread, int blocked) {
    if (thread->blocked == blocked) return;
    thread->blocked = blocked;
    blocked_count += blocked ? 1 : (size_t)-1;
    if (thread->handle < 0 || arming_deferred) return;
    if (blocked)
        engine->disarm(thread->handle);
    else
        engine->arm(thread->handle);
}

/* Takes `thread` out of the table and detaches its handle, under the lock (session start and end). */
static void drop(attached_thread *thread) {
    int handle = release(thread);
    if (handle >= 0) engine->detach(handle);
}

static int engine_attach(const ss_sampling_engine *attaching, int32_t tid, int armed, int *handle) {
    int result = attaching->attach(tid, armed, handle);
    if (result == -EMFILE || result == -ENFILE) atomic_fetch_add(&descriptor_refusals, 1);
    return result;
}

static attached_thread *find(int32_t tid) {
    for (size_t i = 0; i < thread_count; i++)
        if (threads[i].tid == tid) return &threads[i];
    return NULL;
}

/* Grows the table to `needed` entries, allocating with the lock let go: a program's signal
 * handler may wait for the registry's lock (mask_hooks.c), and an allocation under it could
 * wait for a malloc arena that the handler's thread holds. 0, or -ENOMEM. */
static int grow_to(size_t needed) {
    sigset_t saved;
    attached_thread *grown = malloc(needed * sizeof *grown);
    if (!grown) return -ENOMEM;
    lock_registry(&saved);
    attached_thread *unused = grown;
    if (thread_capacity < needed) {
        if (thread_count) memcpy(grown, threads, thread_count * sizeof *grown);
        unused = threads;
        threads = grown;
        thread_capacity = needed;
    }
    unlock_registry(&saved);
    free(unused);
    return 0;
}

/* Reserves a free entry of the table: returns with the lock held and room for one more thread,
 * or -ENOMEM without the lock. */
static int lock_with_room(sigset_t *saved) {
    for (;;) { /* until there is room under the lock: other threads attach meanwhile */
        lock_registry(saved);
        if (thread_count < thread_capacity) return 0;
        size_t needed = thread_capacity ? thread_capacity * 2 : 64;
        unlock_registry(saved);
        if (grow_to(needed) != 0) return -ENOMEM;
    }
}

/* The engine's part of an attach (its timer or counter: perf_event_open can wait for an RCU
 * grace period) runs with the lock let go, so that threads starting and ending meanwhile do
 * not queue behind it (in wall mode a thread asleep on the lock is sampled there); the entry
 * is made under the lock afterwards, unless another attach of the thread or the end of the
 * session came first, and a deferred arming done meanwhile is caught up. */
int ss_thread_attach(int32_t tid, int replace) {
    uint64_t began = ss_now_ns();
    sigset_t saved;
    if (lock_with_room(&saved) != 0) return -ENOMEM;
    if (!engine) { /* no session (or stopped meanwhile): a timer made now would outlive it */
        unlock_registry(&saved);
        return -ESRCH;
    }
    attached_thread *existing = find(tid);
    int replaced = -1;
    if (existing && replace) replaced = release(existing), existing = NULL;
    const ss_sampling_engine *attaching = engine;
    uint64_t epoch = session_epoch, masks = mask_changes;
    int presumed = engine_presumed, deferred = arming_deferred;
    unlock_registry(&saved);
    if (replaced >= 0) attaching->detach(replaced);
    if (existing) return 0;

    int handle = -1, blocked = blocks_engine_signal(tid, &saved);
    int armed = !deferred && !blocked;
    int result = presumed ? 0 : engine_attach(attaching, tid, armed, &handle);
    if (result != 0) return result;
    if (lock_with_room(&saved) != 0) {
        if (handle >= 0) attaching->detach(handle);
        return -ENOMEM;
    }
    int kept = session_epoch == epoch && engine && !find(tid);
    if (kept && presumed && !engine_presumed) {
        /* The presumed engine settled meanwhile (at the deferred arming): attached now, as the
         * settling attached the threads it found, under the lock (once per session at most). */
        armed = !blocked;
        attaching = engine;
        result = engine_attach(engine, tid, armed, &handle);
        kept = result == 0;
    } else if (kept && engine != attaching) {
        kept = 0;
    }
    if (kept && mask_changes != masks && tid != ss_current_tid()) {
        /* A mask changed meanwhile, maybe this thread's, which the mask hooks could not find. */
        int now_blocked = blocks_engine_signal(tid, &saved);
        if (now_blocked && armed && handle >= 0) engine->disarm(handle);
        if (now_blocked) armed = 0;
        blocked = now_blocked;
    }
    /* Armed late (a deferred arming done meanwhile); one that cannot be is not kept, as at the
     * deferred arming: the next scan attaches the thread again. */
    if (kept && handle >= 0 && !armed && !arming_deferred && !blocked && engine->arm(handle) != 0) kept = 0;
    if (kept) {
        threads[thread_count++] = (attached_thread){tid, handle, blocked, began};
        blocked_count += (size_t)blocked;
    }
    unlock_registry(&saved);
    if (!kept && handle >= 0) attaching->detach(handle);
    if (!kept && result == 0 && !engine) result = -ESRCH;
    return result;
}

void ss_thread_detach_ending(void) {
    struct timespec spent = {0, 0};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent);
    ss_ended_thread note = {ss_current_tid(), ss_now_ns(), (int64_t)spent.tv_sec * 1000000000 + spent.tv_nsec};
    sigset_t saved;
    lock_registry(&saved);
    attached_thread *thread = find(note.tid);
    const ss_sampling_engine *detaching = engine;
    if (thread && ended_count < ENDED_CAPACITY) ended_threads[ended_count++] = note;
    int handle = thread ? release(thread) : -1;
    unlock_registry(&saved);
    if (handle >= 0) detaching->detach(handle);
}

size_t ss_thread_take_ended(ss_ended_thread *notes, size_t capacity) {
    sigset_t saved;
    lock_registry(&saved);
    size_t taken = ended_count < capacity ? ended_count : capacity;
    memcpy(notes, ended_threads, taken * sizeof *notes);
    memmove(ended_threads, ended_threads + taken, (ended_count - taken) * sizeof *notes);
    ended_count -= taken;
    unlock_registry(&saved);
    return taken;
}

void ss_thread_detach(int32_t tid) {
    sigset_t saved;
    lock_registry(&saved);
    attached_thread *thread = find(tid);
    const ss_sampling_engine *detaching = engine;
    int handle = thread ? release(thread) : -1;
    unlock_registry(&saved);
    if (handle >= 0) detaching->detach(handle);
}

void ss_thread_mask_engine_signal(int blocked, const sigset_t *mask) {
    sigset_t saved;
    lock_registry(&saved);
    attached_thread *thread = engine ? find(ss_current_tid()) : NULL;
    if (thread) set_blocked(thread, blocked);
    mask_changes++;
    unlock_registry(mask);
}

void ss_thread_note_signal_blocked(int32_t tid, int blocked) {
    sigset_t saved;
    lock_registry(&saved);
    attached_thread *thread = engine ? find(tid) : NULL;
    if (thread) set_blocked(thread, blocked != 0);
    mask_changes++;
    unlock_registry(&saved);
}

int ss_thread_any_blocked(void) { return atomic_load_explicit(&blocked_count, memory_order_relaxed) != 0; }

/* `ask`'s answer about the entry of `tid` (NULL when it is not attached), under the registry's
 * lock: a thread that ends takes its entry out under it before its engine lets the handle go. */
static int64_t ask_about(int32_t tid, int64_t (*ask)(const attached_thread *thread)) {
    sigset_t saved;
    lock_registry(&saved);
    int64_t answer = ask(find(tid));
    unlock_registry(&saved);
    return answer;
}

static int64_t blocked(const attached_thread *thread) { return thread && thread->blocked; }

int ss_thread_signal_blocked(int32_t tid) { return ss_thread_any_blocked() && ask_about(tid, blocked); }

static int64_t schedule_sequence(const attached_thread *thread) {
    return thread && !thread->blocked && thread->handle >= 0 && engine->schedule_sequence
        ? engine->schedule_sequence(thread->handle) : -1;
}

int64_t ss_thread_schedule_sequence(int32_t tid) { return ask_about(tid, schedule_sequence); }

static int64_t attached_at(const attached_thread *thread) { return thread ? (int64_t)thread->attached_ns : 0; }

uint64_t ss_thread_attached_at(int32_t tid) { return (uint64_t)ask_about(tid, attached_at); }

static int64_t orphaned(const attached_thread *thread) { return thread && thread->handle >= 0 && engine->orphaned(thread->handle); }

int ss_thread_timer_orphaned(int32_t tid) { return ask_about(tid, orphaned) != 0; }

size_t ss_thread_list(int32_t *tids, size_t capacity) {
    sigset_t saved;
    lock_registry(&saved);
    size_t count = thread_count;
    for (size_t i = 0; i < count && i < capacity; i++) tids[i] = threads[i].tid;
    unlock_registry(&saved);
    return count;
}

void ss_registry_forget_after_fork(void) {
    /* The child has only the forking thread; the lock may have been held by a thread that
     * does not exist here. What the engine holds for the parent's threads goes. */
    pthread_mutex_init(&registry_lock, NULL);
    for (size_t i = 0; i < thread_count; i++)
        if (engine && threads[i].handle >= 0) engine->forget_after_fork(threads[i].handle);
    thread_count = 0;
    blocked_count = 0;
    engine = NULL;
    arming_deferred = 0;
    engine_presumed = 0;
}

void ss_registry_open(const ss_sampling_engine *session_engine, int deferred, int presumed) {
    sigset_t saved;
    lock_registry(&saved);
    engine = session_engine;
    session_epoch++;
    ended_count = 0;
    arming_deferred = deferred;
    engine_presumed = deferred && presumed;
    unlock_registry(&saved);
}

void ss_registry_arm_deferred(const ss_sampling_engine *settled) {
    sigset_t saved;
    lock_registry(&saved);
    if (arming_deferred && engine) {
        arming_deferred = 0;
        if (engine_presumed) {
            /* Noted threads hold nothing yet: the settled engine attaches them, armed unless
             * they block its signal. */
            engine_presumed = 0;
            engine = settled;
            for (size_t i = 0; i < thread_count;) {
                if (engine_attach(engine, threads[i].tid, !threads[i].blocked, &threads[i].handle) != 0) release(&threads[i]);
                else i++;
            }
        } else {
            /* A thread whose timer cannot be armed leaves the registry, as after a failed
             * attach: the next scan attaches it again. */
            for (size_t i = 0; i < thread_count;) {
                if (threads[i].handle >= 0 && !threads[i].blocked && engine->arm(threads[i].handle) != 0) drop(&threads[i]);
                else i++;
            }
        }
    }
    unlock_registry(&saved);
}

void ss_registry_close(void) {
    sigset_t saved;
    lock_registry(&saved);
    while (thread_count > 0) drop(&threads[0]);
    engine = NULL;
    arming_deferred = 0;
    engine_presumed = 0;
    unlock_registry(&saved);
}
