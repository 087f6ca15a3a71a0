/*
 * Attached threads and, in cpu mode, their timers. One POSIX timer per
 * thread on that thread's CPU-time clock, created with the raw syscall so the
 * sampler can arm it for another thread: clock ((~tid) << 3) | 6, delivery
 * SIGEV_THREAD_ID to that tid. Never touched in signal context, so a mutex
 * guards it. Timers are deleted on detach: the kernel's per-process count of
 * timers is limited.
 *
 * A timer's first expiry is random (see first_expiry_ns), so a thread that
 * lives less than a period still has its fair chance of a sample.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef struct {
    int32_t tid;
    int timer_id; /* kernel timer id, -1 when none (wall mode) */
} attached_thread;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static attached_thread *threads;
static size_t thread_count, thread_capacity;
/* Timers are created disarmed until the sampler thread has the core unwind tables (engine.c). */
static int arming_deferred;

/* xorshift64* state, seeded once per process (and again in a forked child,
 * which would otherwise repeat its parent's draws). Guarded by registry_lock. */
static uint64_t random_state;

static uint64_t next_random(void) {
    if (random_state == 0) {
        /* splitmix64 of the time and pid: distinct per process, never zero after mixing in 1 */
        uint64_t seed = ss_now_ns() ^ ((uint64_t)getpid() << 32);
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

/* Uniform in [0, 1). */
static double next_unit(void) { return (double)(next_random() >> 11) * 0x1.0p-53; }

/* The scheduler tick: the kernel compares a thread's CPU time with its timers
 * only at a tick that finds the thread running. A coarse clock advances once
 * per tick, so its resolution is the tick's length (4 ms at HZ=250). */
static uint64_t scheduler_tick_ns(void) {
    struct timespec resolution;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &resolution) != 0) return 0;
    return (uint64_t)resolution.tv_sec * 1000000000u + (uint64_t)resolution.tv_nsec;
}

/* The first expiry, in the thread's CPU time from now. The kernel looks at a
 * thread only at ticks that land on it, about one per tick of its CPU, and a
 * look counts every expiry the thread's CPU has passed. Expiries placed just
 * after a whole number of ticks, 1 ns + k x tick, are each caught by the
 * (k+1)th look. With k uniform in 0 ... period/tick, the first sample comes
 * at each look with the same chance tick / period, and one period later the
 * next: a thread of N looks (CPU about N x tick) gets N x tick / period samples
 * in expectation, whether N is 1 (a thread shorter than a tick, looked at with
 * probability c / tick, so sampled with probability c / period) or many. Every
 * sample is worth one period. When the period is not longer than the tick,
 * every look finds an expiry due: the first is then uniform in (0, period]. */
static uint64_t first_expiry_ns(uint64_t period) {
    uint64_t tick = scheduler_tick_ns();
    double draw = next_unit();
    if (tick == 0 || tick >= period) return 1 + (uint64_t)(draw * (double)(period - 1));
    return 1 + (uint64_t)(draw * (double)period / (double)tick) * tick;
}

static clockid_t thread_cpu_clock(int32_t tid) {
    return (clockid_t)(((unsigned int)~tid << 3) | 6);
}

int64_t ss_thread_cpu_time_ns(int32_t tid) {
    struct timespec spent;
    if (clock_gettime(thread_cpu_clock(tid), &spent) != 0) return -1;
    return (int64_t)spent.tv_sec * 1000000000 + spent.tv_nsec;
}

/* Starts `timer_id` with a random first expiry (first_expiry_ns), then every period. */
static int arm_cpu_timer(int timer_id) {
    uint64_t period = ss_active_config.period_ns, first = first_expiry_ns(period);
    struct itimerspec spec = {
        .it_interval = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)},
        .it_value = {(time_t)(first / 1000000000u), (long)(first % 1000000000u)},
    };
    return syscall(SYS_timer_settime, timer_id, 0, &spec, NULL) == 0 ? 0 : -errno;
}

/* A timer on `tid`'s CPU clock, armed unless arming is deferred. */
static int create_cpu_timer(int32_t tid, int *timer_id) {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = ss_engine_signal();
    event.sigev_value.sival_ptr = (void *)ss_timer_cookie;
    event._sigev_un._tid = tid;
    int id;
    if (syscall(SYS_timer_create, thread_cpu_clock(tid), &event, &id) != 0) return -errno;
    int status = arming_deferred ? 0 : arm_cpu_timer(id);
    if (status != 0) {
        syscall(SYS_timer_delete, id);
        return status;
    }
    *timer_id = id;
    return 0;
}

static void release(attached_thread *thread) {
    if (thread->timer_id >= 0) syscall(SYS_timer_delete, thread->timer_id);
    *thread = threads[--thread_count];
}

static attached_thread *find(int32_t tid) {
    for (size_t i = 0; i < thread_count; i++)
        if (threads[i].tid == tid) return &threads[i];
    return NULL;
}

int ss_thread_attach(int32_t tid, int replace) {
    if (!ss_engine_running()) return -ESRCH;
    int result = 0;
    pthread_mutex_lock(&registry_lock);
    if (!ss_engine_running()) { /* stopped meanwhile: a timer made now would outlive the session */
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
        int timer_id = -1;
        if (ss_active_config.mode == SS_MODE_CPU) result = create_cpu_timer(tid, &timer_id);
        if (result == 0) threads[thread_count++] = (attached_thread){tid, timer_id};
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
    struct itimerspec left;
    /* A CPU timer reads 0 left once the thread it was made for has exited, while a periodic
     * timer of a live thread always has time left. */
    int orphaned = thread && thread->timer_id >= 0 && syscall(SYS_timer_gettime, thread->timer_id, &left) == 0 &&
                   left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0;
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
    /* The child inherits no timer and only the forking thread; the lock may
     * have been held by a thread that does not exist here. */
    pthread_mutex_init(&registry_lock, NULL);
    thread_count = 0;
    random_state = 0;
    arming_deferred = 0;
}

void ss_registry_defer_arming(void) {
    pthread_mutex_lock(&registry_lock);
    arming_deferred = 1;
    pthread_mutex_unlock(&registry_lock);
}

void ss_registry_arm_deferred(void) {
    pthread_mutex_lock(&registry_lock);
    if (arming_deferred) {
        arming_deferred = 0;
        /* A thread whose timer cannot be armed leaves the registry, as after a failed
         * attach: the next scan attaches it again. */
        for (size_t i = 0; i < thread_count;) {
            if (threads[i].timer_id >= 0 && arm_cpu_timer(threads[i].timer_id) != 0) release(&threads[i]);
            else i++;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

void ss_registry_stop_all(void) {
    pthread_mutex_lock(&registry_lock);
    arming_deferred = 0;
    while (thread_count > 0) release(&threads[0]);
    pthread_mutex_unlock(&registry_lock);
}
