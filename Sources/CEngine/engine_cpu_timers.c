/*
 * cpu mode's engine: one POSIX timer per thread on that thread's CPU-time
 * clock, created with the raw syscall so the sampler can make it for another
 * thread, delivered (SIGEV_THREAD_ID) to that thread with the engine's signal
 * and cookie. Timers are deleted on detach: the kernel's per-process count of
 * timers is limited.
 *
 * A timer's first expiry is random (see first_expiry_ns), so a thread that
 * lives less than a period still has its fair chance of a sample.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

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
    uint64_t tick = ss_scheduler_tick_ns();
    double draw = ss_random_unit();
    if (tick == 0 || tick >= period) return 1 + (uint64_t)(draw * (double)(period - 1));
    return 1 + (uint64_t)(draw * (double)period / (double)tick) * tick;
}

/* The timers' period: cpu mode's; in wall mode that of the counters (ss_wall_counter_period),
 * so that a running thread is sampled at every scheduler tick that finds it (the timers cannot
 * fire between ticks). */
static uint64_t timer_period(void) {
    uint64_t period = ss_active_config.period_ns;
    return ss_active_config.mode == SS_MODE_WALL ? ss_wall_counter_period(period) : period;
}

/* Starts `timer_id` with a random first expiry (first_expiry_ns), then every period. */
static int arm_cpu_timer(int timer_id) {
    uint64_t period = timer_period(), first = first_expiry_ns(period);
    struct itimerspec spec = {
        .it_interval = {(time_t)(period / 1000000000u), (long)(period % 1000000000u)},
        .it_value = {(time_t)(first / 1000000000u), (long)(first % 1000000000u)},
    };
    return syscall(SYS_timer_settime, timer_id, 0, &spec, NULL) == 0 ? 0 : -errno;
}

/* Address whose identity marks the engine's own timers (sigev_value). */
static const char timer_cookie[1];

static int attach(int32_t tid, int armed, int *handle) {
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event.sigev_signo = ss_engine_signal();
    event.sigev_value.sival_ptr = (void *)timer_cookie;
    event._sigev_un._tid = tid;
    int id;
    if (syscall(SYS_timer_create, ss_thread_cpu_clock(tid), &event, &id) != 0) return -errno;
    int status = armed ? arm_cpu_timer(id) : 0;
    if (status != 0) {
        syscall(SYS_timer_delete, id);
        return status;
    }
    *handle = id;
    return 0;
}

static int arm(int handle) { return arm_cpu_timer(handle); }

/* Pushed out of reach (a century of the thread's CPU) rather than stopped: a stopped timer
 * reads 0 left, which `orphaned` takes for a timer whose thread has exited. */
static void disarm(int handle) {
    const struct itimerspec out_of_reach = {{0, 0}, {(time_t)100 * 365 * 24 * 3600, 0}};
    syscall(SYS_timer_settime, handle, 0, &out_of_reach, NULL);
}

static void detach(int handle) { syscall(SYS_timer_delete, handle); }

/* A CPU timer reads 0 left once the thread it was made for has exited, while a periodic
 * timer of a live thread always has time left. */
static int orphaned(int handle) {
    struct itimerspec left;
    return syscall(SYS_timer_gettime, handle, &left) == 0 && left.it_value.tv_sec == 0 && left.it_value.tv_nsec == 0;
}

/* The child inherits no timer. */
static void forget_after_fork(int handle) { (void)handle; }

/* A timer's expiry carries the cookie; so does one queued again by this process. */
static int owns_signal(const siginfo_t *info) {
    if (info->si_value.sival_ptr != (void *)timer_cookie) return 0;
    return info->si_code == SI_TIMER || (info->si_code == SI_QUEUE && info->si_pid == ss_own_pid());
}

/* A timer expires every period of its thread's CPU time, at the first scheduler tick that finds
 * its thread running after that. */
static uint64_t sample_cpu_period(void) {
    uint64_t period = timer_period(), tick = ss_scheduler_tick_ns();
    return tick > period ? tick : period;
}

/* Every expiry is a sample. */
static int sample_taken(const siginfo_t *info) {
    (void)info;
    return 1;
}

const ss_sampling_engine ss_cpu_timer_engine = {"CPU-time timers", attach, arm, disarm, detach, orphaned,
                                                forget_after_fork, NULL, owns_signal, sample_taken, sample_cpu_period};
