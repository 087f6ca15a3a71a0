/*
 * cpu mode's perf_event engine: a software task-clock counter per thread
 * (PERF_COUNT_SW_TASK_CLOCK) overflows after every period of that thread's CPU
 * time, at any period (CPU-time timers fire only at scheduler ticks, at most 250
 * times a CPU-second at HZ=250), and the overflow is delivered as the engine's
 * signal to that very thread (O_ASYNC, F_SETSIG, F_SETOWN_EX with F_OWNER_TID), so
 * the handler and the walk stay as they are. User-space time only
 * (exclude_kernel), which perf_event_paranoid 2 allows. The kernel sends these
 * signals with si_code POLL_IN and the descriptor in si_fd, not with the engine's
 * cookie: the handler knows them by their descriptor (ss_perf_descriptor_is_ours).
 *
 * Descriptors are close-on-exec, moved up to FIRST_DESCRIPTOR and beyond, out of the
 * range a program numbers its own files in, and closed in a forked child (they are
 * the parent's threads' counters). A descriptor the program closed or reused is
 * noticed by the thread scan (orphaned), which attaches the thread again.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { FIRST_DESCRIPTOR = 512, DESCRIPTOR_LIMIT = 1 << 16 };

/* Descriptors that are or were the engine's counters, and those still at their first
 * (random) period; read and written by the handler. */
static _Atomic uint64_t ours[DESCRIPTOR_LIMIT / 64];
static _Atomic uint64_t first_period[DESCRIPTOR_LIMIT / 64];

static void mark(_Atomic uint64_t *bits, int fd, int set) {
    if (fd < 0 || fd >= DESCRIPTOR_LIMIT) return;
    uint64_t bit = UINT64_C(1) << (fd % 64);
    if (set) atomic_fetch_or(&bits[fd / 64], bit);
    else atomic_fetch_and(&bits[fd / 64], ~bit);
}

static int marked(_Atomic uint64_t *bits, int fd) {
    if (fd < 0 || fd >= DESCRIPTOR_LIMIT) return 0;
    return (atomic_load_explicit(&bits[fd / 64], memory_order_relaxed) >> (fd % 64)) & 1;
}

int ss_perf_descriptor_is_ours(int fd) { return marked(ours, fd); }

/* Each counter's control page, mapped so that poll tells a counter whose thread exited (hung
 * up) from a live one (without it, poll says hung up always). Under the registry's lock. */
static void *control_pages[DESCRIPTOR_LIMIT];

static void unmap_control_page(int fd) {
    if (fd < 0 || fd >= DESCRIPTOR_LIMIT || !control_pages[fd]) return;
    munmap(control_pages[fd], (size_t)sysconf(_SC_PAGESIZE));
    control_pages[fd] = NULL;
}

static void release(int fd) {
    unmap_control_page(fd);
    close(fd);
}

/* Events counted by counters closed so far. */
static _Atomic uint64_t closed_counts;

uint64_t ss_engine_events_counted(void) { return atomic_load(&closed_counts); }

/* A sample every this many events (or ns of CPU time, for the task clock). */
static uint64_t sample_period(void) {
    return ss_active_config.event_period ? ss_active_config.event_period : ss_active_config.period_ns;
}

/* A counter's first period is random, uniform in (0, period]: a thread that uses c < period
 * of CPU is then sampled with probability c / period, each sample worth one period, so short
 * threads are counted without bias. Its first overflow sets the period it keeps. */
void ss_perf_sample_taken(int fd) {
    if (!marked(first_period, fd)) return;
    mark(first_period, fd, 0);
    uint64_t period = sample_period();
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
}

/* A counter of the session's event (the task clock unless asked otherwise) for thread `tid`
 * (0: the caller), overflowing after `first` events and then (once ss_perf_sample_taken sets
 * it) every period; -errno on failure. */
static int open_counter(int32_t tid, uint64_t first) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    int task_clock = ss_active_config.event_period == 0;
    attr.type = task_clock ? PERF_TYPE_SOFTWARE : ss_active_config.event_type;
    attr.config = task_clock ? PERF_COUNT_SW_TASK_CLOCK : ss_active_config.event_config;
    attr.sample_period = first;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.wakeup_events = 1;
    long fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

/* Grows the process's descriptor table to hold FIRST_DESCRIPTOR now, while the process has one
 * thread: grown later, with threads sharing it, the kernel waits for an RCU grace period
 * (expand_fdtable; 10 to 12 ms measured here), which delayed the first counter's start. */
void ss_perf_reserve_descriptors(void) {
    int low = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (low < 0) return;
    int high = fcntl(low, F_DUPFD_CLOEXEC, FIRST_DESCRIPTOR);
    if (high >= 0) close(high);
    close(low);
}

int ss_perf_events_available(void) {
    ss_config saved = ss_active_config;
    if (ss_active_config.period_ns == 0) ss_active_config.period_ns = 10000000;
    int fd = open_counter(0, sample_period());
    ss_active_config = saved;
    if (fd < 0) return fd;
    close(fd);
    return 0;
}

static int attach(int32_t tid, int armed, int *handle) {
    uint64_t period = sample_period();
    int fd = open_counter(tid, 1 + (uint64_t)(ss_random_unit() * (double)(period - 1)));
    if (fd < 0) return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, FIRST_DESCRIPTOR);
    if (high >= 0) {
        close(fd);
        fd = high;
    }
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    void *page = fd < DESCRIPTOR_LIMIT ? mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (page == MAP_FAILED || fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, ss_engine_signal()) != 0 ||
        fcntl(fd, F_SETFL, O_ASYNC) != 0) {
        int error = page == MAP_FAILED && fd >= DESCRIPTOR_LIMIT ? EMFILE : errno;
        if (page != MAP_FAILED) munmap(page, (size_t)sysconf(_SC_PAGESIZE));
        close(fd);
        return -error;
    }
    control_pages[fd] = page;
    mark(ours, fd, 1);
    mark(first_period, fd, 1);
    if (armed && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        int error = errno;
        mark(ours, fd, 0);
        release(fd);
        return -error;
    }
    *handle = fd;
    return 0;
}

static int arm(int handle) { return ioctl(handle, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno; }

/* Whether `handle` is still one of the engine's counters: the program may have closed it,
 * and reused its number for a file of its own (which must be left alone). */
static int still_ours(int handle) {
    int flags = fcntl(handle, F_GETFL);
    return flags >= 0 && (flags & O_ASYNC) && fcntl(handle, F_GETSIG) == ss_engine_signal();
}

/* A disabled counter neither counts nor signals; it keeps what is left of its period. */
static void disarm(int handle) {
    if (still_ours(handle)) ioctl(handle, PERF_EVENT_IOC_DISABLE, 0);
}

static void detach(int handle) {
    if (!still_ours(handle)) {
        unmap_control_page(handle); /* closed by the program: only our mapping is left to undo */
        return;
    }
    ioctl(handle, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t count = 0;
    if (read(handle, &count, sizeof count) == (ssize_t)sizeof count) atomic_fetch_add(&closed_counts, count);
    release(handle);
}

/* The thread the counter was opened for has exited (its tid may be another thread's now): the
 * kernel then reports the counter hung up. */
static int thread_exited(int handle) {
    struct pollfd entry = {handle, POLLIN, 0};
    return poll(&entry, 1, 0) == 1 && (entry.revents & POLLHUP);
}

static int orphaned(int handle) { return !still_ours(handle) || thread_exited(handle); }

static void forget_after_fork(int handle) { release(handle); }

const ss_sampling_engine ss_perf_event_engine = {"perf_event task-clock counters (user space)", attach, arm, disarm,
                                                 detach, orphaned, forget_after_fork};
