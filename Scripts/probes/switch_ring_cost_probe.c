/* switch_ring_cost_probe: what wall mode's rings cost a thread each time it leaves its core.
 *
 * Two threads hand a token back and forth through a futex, each handing making one context
 * switch out and one in per thread, so the time per handing is about two switches. Measured
 * with no ring on the threads, with a context-switch ring on each (the event ss_switch_ring_open
 * makes: a dummy software event with context_switch = 1), and with a copy ring on each (the
 * event ss_preempt_ring_open makes: context switches sampled with the user registers and 4 KiB
 * of the user stack; needs CAP_PERFMON or perf_event_paranoid <= 1). The rings are mapped like
 * the engine's and never read: the kernel overwrites nothing and drops records once a ring is
 * full, so each ring is opened afresh for each round. Prints the median over the rounds of the
 * nanoseconds per handing in each case, and the difference from no ring per switch.
 *
 * Build: gcc -O2 -pthread -o switch_ring_cost_probe switch_ring_cost_probe.c
 * Run:   ./switch_ring_cost_probe [handings per round, 20000] [rounds, 9]
 * Pin both threads to one core for a switch per handing (else each waits on its own core):
 *        taskset -c 0 ./switch_ring_cost_probe */
#define _GNU_SOURCE
#include <asm/perf_regs.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { RING_DATA_PAGES = 64 };
enum ring_kind { NO_RING, SWITCH_RING, COPY_RING };
static const char *const kind_names[] = {"no ring", "switch ring", "copy ring"};

static _Atomic uint32_t token;
static long handings;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *word, uint32_t value) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits for the token to be `mine`, then hands it to the other thread, `handings` times. */
static void hand_back_and_forth(uint32_t mine) {
    for (long i = 0; i < handings; i++) {
        uint32_t seen;
        while ((seen = atomic_load(&token)) != mine) futex_wait(&token, seen);
        atomic_store(&token, mine ^ 1);
        futex_wake(&token);
    }
}

/* The ring of `kind` on thread `tid`, mapped: its descriptor, or -1 (the reason printed). */
static int open_ring(enum ring_kind kind, pid_t tid, void **map, size_t *length) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.exclude_hv = 1;
    attr.watermark = 1;
    attr.wakeup_watermark = UINT32_MAX;
    attr.sample_type = PERF_SAMPLE_TIME;
    if (kind == SWITCH_RING) {
        attr.config = PERF_COUNT_SW_DUMMY;
        attr.context_switch = 1;
        attr.sample_id_all = 1;
        attr.exclude_kernel = 1;
    } else {
        attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
        attr.sample_period = 1;
        attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        attr.sample_regs_user = 1ull << PERF_REG_X86_BX | 1ull << PERF_REG_X86_BP | 1ull << PERF_REG_X86_SP | 1ull << PERF_REG_X86_IP;
        attr.sample_stack_user = 4096;
    }
    int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        perror("perf_event_open");
        return -1;
    }
    *length = (size_t)(RING_DATA_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
    *map = mmap(NULL, *length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*map == MAP_FAILED) {
        perror("mmap");
        close(fd);
        return -1;
    }
    return fd;
}

struct partner {
    pid_t tid;
    _Atomic int ready;
    _Atomic int go;
};

static void *partner_thread(void *argument) {
    struct partner *partner = argument;
    partner->tid = (pid_t)syscall(SYS_gettid);
    atomic_store(&partner->ready, 1);
    while (!atomic_load(&partner->go)) sched_yield();
    hand_back_and_forth(1);
    return NULL;
}

/* One round with rings of `kind` on both threads: nanoseconds per handing, or -1. */
static double timed_round(enum ring_kind kind) {
    struct partner partner = {0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, partner_thread, &partner) != 0) return -1;
    while (!atomic_load(&partner.ready)) sched_yield();
    int fds[2] = {-1, -1};
    void *maps[2] = {NULL, NULL};
    size_t lengths[2] = {0, 0};
    pid_t tids[2] = {(pid_t)syscall(SYS_gettid), partner.tid};
    int failed = 0;
    for (int i = 0; i < 2 && kind != NO_RING; i++)
        if ((fds[i] = open_ring(kind, tids[i], &maps[i], &lengths[i])) < 0) failed = 1;
    atomic_store(&token, 0);
    atomic_store(&partner.go, 1);
    uint64_t start = now_ns();
    hand_back_and_forth(0);
    pthread_join(thread, NULL);
    uint64_t elapsed = now_ns() - start;
    for (int i = 0; i < 2; i++) {
        if (maps[i]) munmap(maps[i], lengths[i]);
        if (fds[i] >= 0) close(fds[i]);
    }
    return failed ? -1 : (double)elapsed / (double)handings;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    handings = argc > 1 ? atol(argv[1]) : 20000;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (handings < 1 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "usage: %s [handings per round >= 1] [rounds 1..100]\n", argv[0]);
        return 2;
    }
    double *times[3];
    for (int kind = 0; kind < 3; kind++) times[kind] = calloc((size_t)rounds, sizeof(double));
    /* The kinds interleaved round by round, so that the machine's drift falls on all alike. */
    for (int round = 0; round < rounds; round++)
        for (int kind = 0; kind < 3; kind++) times[kind][round] = timed_round((enum ring_kind)kind);
    double medians[3];
    for (int kind = 0; kind < 3; kind++) {
        qsort(times[kind], (size_t)rounds, sizeof(double), compare_doubles);
        medians[kind] = times[kind][rounds / 2];
        if (times[kind][0] < 0) {
            printf("%-12s not available here\n", kind_names[kind]);
            continue;
        }
        printf("%-12s %8.0f ns per handing (%.0f to %.0f)", kind_names[kind], medians[kind], times[kind][0], times[kind][rounds - 1]);
        if (kind != NO_RING) printf(", %+.2f us per switch", (medians[kind] - medians[NO_RING]) / 2000.0);
        printf("\n");
    }
    return 0;
}
