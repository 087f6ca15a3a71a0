/*
 * cpu mode's perf_event engine: a software task-clock counter per thread
 * (PERF_COUNT_SW_TASK_CLOCK) overflows after every period of that thread's CPU
 * time, at any period (CPU-time timers fire only at scheduler ticks, at most 250
 * times a CPU-second at HZ=250), and the overflow is delivered as the engine's
 * signal to that very thread (O_ASYNC, F_SETSIG, F_SETOWN_EX with F_OWNER_TID), so
 * the handler and the walk stay as they are. The counters count user space only
 * (exclude_kernel), whatever the kernel allows: an overflow then comes only in an
 * interrupt that lands in user space, and its signal never lands inside a system call
 * (where it would end a `poll` or `nanosleep` with EINTR); the time the threads spend in
 * the kernel is not sampled (the summary counts it). The kernel sends these
 * signals with si_code POLL_IN and the descriptor in si_fd, not with the engine's
 * cookie: the engine knows them by their descriptor (owns_signal).
 *
 * Descriptors are the program's resource too (see counter_room): the counters take at
 * most a sixteenth of the soft descriptor limit, never a number under FD_SETSIZE when the
 * limit leaves room above it (select() works on every descriptor the program would have
 * had without the profiler), else only the top sixteenth of the table. A thread beyond
 * that bound gets no counter (counted as a refusal, said in the summary). Every number is
 * checked to be still the engine's counter (its anonymous inode and the kernel's unique
 * event id, still_ours) before the engine reads, disables or closes it: the program may
 * have closed it and reused the number for a file of its own. Close-on-exec; closed in a
 * forked child (they are the parent's threads' counters) only where still the engine's.
 * A counter the program closed or replaced is noticed by the thread scan (orphaned),
 * which attaches the thread again.
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
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

/* DESCRIPTOR_LIMIT bounds the numbers the engine tracks; SHARE_DIVISOR the part of the soft
 * limit the counters may hold, at most MAXIMUM_COUNTERS. */
enum { DESCRIPTOR_LIMIT = 1 << 16, SHARE_DIVISOR = 16, MAXIMUM_COUNTERS = 4096 };

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

/* Each counter's control page, mapped so that poll tells a counter whose thread exited (hung
 * up) from a live one (without it, poll says hung up always), and the kernel's unique id of
 * the event at that number (PERF_EVENT_IOC_ID), by which the engine knows it is still its
 * own. Each entry is written by the one attach or detach of its number. */
static void *control_pages[DESCRIPTOR_LIMIT];
static _Atomic uint64_t event_ids[DESCRIPTOR_LIMIT];
/* The anonymous inode every perf_event descriptor shares (st_dev, st_ino): a descriptor
 * that is not on it is not a counter, and is never given a perf ioctl. */
static _Atomic uint64_t counter_device, counter_inode;
/* Counters held now, with wall mode's held /proc files (ss_engine_place_descriptor), bounded
 * by counter_room: a place is reserved before a counter takes it,
 * since threads attach and detach at once (thread_registry.c lets its lock go meanwhile). */
static _Atomic int counters_held;

/* The kernel's id of the perf event at `fd`, 0 if `fd` is not a perf_event descriptor (a
 * file of the program's, closed): fstat first, so that a file of the program's never gets the
 * ioctl (other anonymous-inode descriptors, an eventfd or epoll, pass that check, but the
 * ioctl's type belongs to perf alone, and they refuse it). Async-signal-safe. */
static uint64_t event_id(int fd) {
    struct stat status;
    if (fstat(fd, &status) != 0 || (uint64_t)status.st_dev != atomic_load(&counter_device) ||
        (uint64_t)status.st_ino != atomic_load(&counter_inode))
        return 0;
    uint64_t id = 0;
    return ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 ? id : 0;
}

/* Whether `fd` is still the counter the engine put there: the program may have closed it and
 * reused its number for a file of its own (which must be left alone). Async-signal-safe. */
static int still_ours(int fd) {
    if (fd < 0 || fd >= DESCRIPTOR_LIMIT) return 0;
    uint64_t id = atomic_load_explicit(&event_ids[fd], memory_order_relaxed);
    return id != 0 && event_id(fd) == id;
}

static void unmap_control_page(int fd) {
    if (fd < 0 || fd >= DESCRIPTOR_LIMIT || !control_pages[fd]) return;
    munmap(control_pages[fd], (size_t)sysconf(_SC_PAGESIZE));
    control_pages[fd] = NULL;
}

/* Forgets the counter at `fd`, closing it only if it is still the engine's. */
static void release(int fd) {
    int ours_still = still_ours(fd);
    unmap_control_page(fd);
    atomic_store(&event_ids[fd], 0);
    atomic_fetch_sub(&counters_held, 1);
    if (ours_still) close(fd);
}

/* Where counters may go and how many: at most a sixteenth of the soft descriptor limit (no
 * more than MAXIMUM_COUNTERS), so that the program keeps fifteen sixteenths of its headroom;
 * at FD_SETSIZE and up when the limit has that room above FD_SETSIZE, so that no descriptor
 * the program opens is pushed past FD_SETSIZE (select() on it would overrun its fd_set); else
 * in the top sixteenth of the table, where no number reaches FD_SETSIZE anyway. The limit is
 * read at every attach (the program may change it) and never raised. */
static int counter_room(int *first) {
    struct rlimit limit;
    rlim_t soft = getrlimit(RLIMIT_NOFILE, &limit) == 0 ? limit.rlim_cur : FD_SETSIZE;
    if (soft > DESCRIPTOR_LIMIT) soft = DESCRIPTOR_LIMIT;
    int share = (int)(soft / SHARE_DIVISOR);
    if (share > MAXIMUM_COUNTERS) share = MAXIMUM_COUNTERS;
    if (soft <= FD_SETSIZE) {
        *first = (int)soft - share;
        return share;
    }
    *first = FD_SETSIZE;
    return (int)soft - FD_SETSIZE < share ? (int)soft - FD_SETSIZE : share;
}

int ss_perf_counter_room(int *first) { return counter_room(first); }

/* Events counted by counters closed so far. */
static _Atomic uint64_t closed_counts;

uint64_t ss_engine_events_counted(void) { return atomic_load(&closed_counts); }

/* A sample every this many events (or ns of CPU time, for the task clock). */
static uint64_t sample_period(void) {
    if (ss_active_config.mode == SS_MODE_WALL) return ss_wall_counter_period(ss_active_config.period_ns);
    return ss_active_config.event_period ? ss_active_config.event_period : ss_active_config.period_ns;
}

/* The counter at `fd` overflows every period from now on. */
static void set_whole_period(int fd) {
    mark(first_period, fd, 0);
    if (!still_ours(fd)) return; /* replaced by a file of the program's since the overflow */
    uint64_t period = sample_period();
    ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
}

/* The calling thread's counter, once set to the whole period: when (ss_now_ns), at what CPU
 * time of the thread, and whether its next overflow is still to be checked (sample_taken). */
static SS_TLS uint64_t period_set_at, cpu_at_period_set;
static SS_TLS int next_overflow_unchecked;
/* Overflows dropped as left over from a first period. */
static _Atomic uint64_t early_overflows;

uint64_t ss_engine_early_overflows(void) { return atomic_load(&early_overflows); }

static uint64_t thread_cpu_ns(void) {
    struct timespec spent;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spent) != 0) return 0;
    return (uint64_t)spent.tv_sec * 1000000000u + (uint64_t)spent.tv_nsec;
}

/* A counter's first period is random, uniform in (0, period]: a thread that uses c < period
 * of CPU is then sampled with probability c / period, each sample worth one period, so short
 * threads are counted without bias. Its first overflow sets the period it keeps. Until then
 * the kernel re-arms the counter with the first period, so a short one (tens of us) overflows
 * again before the handler has set the whole period (the signal takes 15-30 us to arrive
 * here), and that signal comes once the handler returns, or once the thread runs again: such
 * an overflow is no sample (they over-counted threads far shorter than the period by 6 to
 * 30 %). A true next overflow comes a whole period of the counter's time after the handler set
 * it, so the thread's CPU time has moved by about that much, and its wall time by more: an
 * overflow after less than half a period of either is a leftover. The wall clock settles most
 * at once; the thread's CPU clock (a system call) is read at the first overflow and at most
 * once after it. A sampled event's overflows are all kept (each is events that happened). */
static int sample_taken(const siginfo_t *info) {
    int fd = info->si_fd;
    uint64_t now = ss_now_ns(), half = sample_period() / 2;
    if (marked(first_period, fd)) {
        set_whole_period(fd);
        period_set_at = now;
        cpu_at_period_set = thread_cpu_ns();
        next_overflow_unchecked = 1;
        return 1;
    }
    if (!next_overflow_unchecked || ss_active_config.event_period) return 1;
    if (now - period_set_at >= half && thread_cpu_ns() - cpu_at_period_set >= half) {
        next_overflow_unchecked = 0;
        return 1;
    }
    atomic_fetch_add_explicit(&early_overflows, 1, memory_order_relaxed);
    return 0;
}

/* A counter of the session's event (the task clock unless asked otherwise) for thread `tid`
 * (0: the caller), overflowing after `first` events and then (once sample_taken sets
 * it) every period, in user space only; -errno on failure. */
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
    return ss_perf_event_open(&attr, tid);
}

/* Grows the process's descriptor table to hold the first counter's number now, while the
 * process has one thread: grown later, with threads sharing it, the kernel waits for an RCU
 * grace period (expand_fdtable; 10 to 12 ms measured here), which delayed the first counter. */
void ss_perf_reserve_descriptors(void) {
    int first;
    if (counter_room(&first) <= 0) return;
    int low = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (low < 0) return;
    int high = fcntl(low, F_DUPFD_CLOEXEC, first);
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

/* Moves the new counter `fd` to its place (counter_room), or closes it: a counter is never
 * left among the program's numbers. The counter's number, or -EMFILE. */
/* Moves `fd`, the file `identity` names (borrowed_files.c), to a place among the counters; the
 * number it leaves is closed only if it is still that file, and a copy of another file (the
 * program's, at that number meanwhile) is given back. */
static int place_identified(int fd, const ss_file_identity *identity) {
    int first, room = counter_room(&first);
    int placed = atomic_fetch_add(&counters_held, 1) < room ? fcntl(fd, F_DUPFD_CLOEXEC, first) : -1;
    ss_borrowed_close(fd, identity);
    if (placed >= 0 && placed < DESCRIPTOR_LIMIT && ss_borrowed_is(placed, identity)) return placed;
    if (placed >= 0) close(placed);
    atomic_fetch_sub(&counters_held, 1);
    return -EMFILE;
}

static int place(int fd) {
    ss_file_identity identity;
    if (ss_borrowed_identify(fd, &identity) != 0) {
        close(fd);
        return -EBADF;
    }
    return place_identified(fd, &identity);
}

int ss_engine_place_descriptor(int fd, const ss_file_identity *identity) { return place_identified(fd, identity); }

void ss_engine_release_descriptor(void) { atomic_fetch_sub(&counters_held, 1); }

/* Notes the counter at `fd` as the engine's: its inode and its event id. 0 or -errno. */
static int identify(int fd) {
    struct stat status;
    if (fstat(fd, &status) != 0) return -errno;
    atomic_store(&counter_device, (uint64_t)status.st_dev);
    atomic_store(&counter_inode, (uint64_t)status.st_ino);
    uint64_t id = event_id(fd);
    if (id == 0) return -EBADF;
    atomic_store(&event_ids[fd], id);
    return 0;
}

static int attach(int32_t tid, int armed, int *handle) {
    uint64_t period = sample_period();
    int fd = open_counter(tid, 1 + (uint64_t)(ss_random_unit() * (double)(period - 1)));
    if (fd < 0) return fd;
    fd = place(fd);
    if (fd < 0) return fd;
    struct f_owner_ex owner = {F_OWNER_TID, tid};
    int error = identify(fd);
    void *page = error ? MAP_FAILED : mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED || fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, ss_engine_signal()) != 0 ||
        fcntl(fd, F_SETFL, O_ASYNC) != 0) {
        if (!error) error = -errno;
        if (page != MAP_FAILED) munmap(page, (size_t)sysconf(_SC_PAGESIZE));
        atomic_store(&event_ids[fd], 0);
        atomic_fetch_sub(&counters_held, 1);
        close(fd);
        return error;
    }
    control_pages[fd] = page;
    mark(ours, fd, 1);
    mark(first_period, fd, 1);
    if (armed && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
        error = -errno;
        mark(ours, fd, 0);
        release(fd);
        return error;
    }
    *handle = fd;
    return 0;
}

static int arm(int handle) {
    if (!still_ours(handle)) return -EBADF;
    return ioctl(handle, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno;
}

/* A disabled counter neither counts nor signals; it keeps what is left of its period. */
static void disarm(int handle) {
    if (still_ours(handle)) ioctl(handle, PERF_EVENT_IOC_DISABLE, 0);
}

static void detach(int handle) {
    if (still_ours(handle)) { /* else closed by the program: only our mapping is left to undo */
        ioctl(handle, PERF_EVENT_IOC_DISABLE, 0);
        uint64_t count = 0;
        if (read(handle, &count, sizeof count) == (ssize_t)sizeof count) atomic_fetch_add(&closed_counts, count);
    }
    release(handle);
}

/* The thread the counter was opened for has exited (its tid may be another thread's now): the
 * kernel then reports the counter hung up. */
static int thread_exited(int handle) {
    struct pollfd entry = {handle, POLLIN, 0};
    return poll(&entry, 1, 0) == 1 && (entry.revents & POLLHUP);
}

static int orphaned(int handle) { return !still_ours(handle) || thread_exited(handle); }

/* The counter's control page is rewritten (its `lock` moved on by two) each time the kernel
 * schedules the counter in with its thread, which is each time the thread gets a core while the
 * counter is enabled. The mapping holds the counter even if the program closed its descriptor. */
static int64_t schedule_sequence(int handle) {
    if (handle < 0 || handle >= DESCRIPTOR_LIMIT || !control_pages[handle]) return -1;
    const struct perf_event_mmap_page *page = control_pages[handle];
    return (int64_t)__atomic_load_n(&page->lock, __ATOMIC_ACQUIRE);
}

/* A forked child closes its copies of the parent's counters, and nothing the program put at
 * their numbers since (a file it dup2()ed there before forking stays open in the child). */
static void forget_after_fork(int handle) { release(handle); }

/* An overflow comes as POLL_IN from the counter's descriptor, one that is (or was) the engine's. */
static int owns_signal(const siginfo_t *info) { return info->si_code == POLL_IN && marked(ours, info->si_fd); }

const ss_sampling_engine ss_perf_event_engine = {"perf_event task-clock counters", attach, arm, disarm, detach, orphaned,
                                                 forget_after_fork, schedule_sequence, owns_signal, sample_taken, sample_period};
