/*
 * Wall mode: when a thread leaves and regains its core, as the kernel tells it. A perf_event
 * software dummy event on the thread with context_switch records (PERF_RECORD_SWITCH: in, out,
 * and out while still runnable, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), stamped with
 * CLOCK_MONOTONIC, written by the kernel into a ring mapped here and read by the sampler
 * thread without a system call. The event's descriptor is closed as soon as the ring is
 * mapped: the mapping keeps the event alive, so no descriptor of the program's is taken. The
 * event never signals (no O_ASYNC). The mapping is not inherited by fork (the kernel marks
 * it VM_DONTCOPY). Never called in signal context.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Data pages of each ring: 4 KiB hold 256 records of 16 bytes (header, time). */
enum { DATA_PAGES = 1 };
_Static_assert((DATA_PAGES & (DATA_PAGES - 1)) == 0, "the kernel maps a power of two of data pages (copy_out masks offsets)");

struct ss_switch_ring {
    struct perf_event_mmap_page *control;
    const unsigned char *data;
    uint64_t data_size;
    size_t mapped;
};

int ss_switch_ring_bound(void) {
    long kilobytes = 516; /* the kernel's default */
    ss_file_identity identity;
    int fd = ss_borrowed_open("/proc/sys/kernel/perf_event_mlock_kb", 0, &identity);
    if (fd >= 0) {
        char text[32] = {0};
        if (pread(fd, text, sizeof text - 1, 0) > 0) kilobytes = strtol(text, NULL, 10);
        ss_borrowed_close(fd, &identity);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), page_kilobytes = sysconf(_SC_PAGESIZE) / 1024;
    if (cpus < 1) cpus = 1;
    if (kilobytes < 0 || page_kilobytes < 1) return 0;
    long rings = kilobytes * cpus / page_kilobytes / (1 + DATA_PAGES) / 2;
    return (int)(rings < 1024 ? rings : 1024);
}

ss_switch_ring *ss_switch_ring_open(int32_t tid, int *error) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.context_switch = 1;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TIME;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    /* No wake-up before the ring is full: nobody polls it. */
    attr.watermark = 1;
    attr.wakeup_watermark = UINT32_MAX;
    long fd = syscall(SYS_perf_event_open, &attr, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        *error = -errno;
        return NULL;
    }
    /* Mapped and closed at once, each only if the number is still the ring's event. */
    ss_file_identity identity;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), mapped = (1 + DATA_PAGES) * page;
    void *base = ss_borrowed_identify((int)fd, &identity) == 0 ? mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0)
                                                                 : MAP_FAILED;
    *error = base == MAP_FAILED ? -errno : 0;
    ss_borrowed_close((int)fd, &identity);
    if (base == MAP_FAILED) return NULL;
    ss_switch_ring *ring = malloc(sizeof *ring);
    if (!ring) {
        munmap(base, mapped);
        *error = -ENOMEM;
        return NULL;
    }
    ring->control = base;
    ring->data = (const unsigned char *)base + page;
    ring->data_size = (uint64_t)DATA_PAGES * page;
    ring->mapped = mapped;
    return ring;
}

/* Copies `length` bytes at ring offset `offset`, wrapping at the end (the kernel makes the data
 * a power of two of pages: the offset is masked, and the copy is at most two pieces; a byte at a
 * time, each offset divided by the size, was 7 % of the sampler thread's CPU on redis). */
static void copy_out(const ss_switch_ring *ring, uint64_t offset, void *into, size_t length) {
    uint64_t start = offset & (ring->data_size - 1);
    size_t first = length < ring->data_size - start ? length : (size_t)(ring->data_size - start);
    memcpy(into, ring->data + start, first);
    memcpy((unsigned char *)into + first, ring->data, length - first);
}

/* The record at `offset`, whose header is `header`, as a switch in `*decoded`: 1 for a switch or
 * a loss, 0 for a record of another kind. */
static int decode(const ss_switch_ring *ring, uint64_t offset, const struct perf_event_header *header, ss_switch *decoded) {
    if (header->type == PERF_RECORD_SWITCH && header->size >= sizeof *header + sizeof(uint64_t)) {
        uint64_t time;
        copy_out(ring, offset + sizeof *header, &time, sizeof time);
        int out = (header->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
        int preempted = (header->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
        *decoded = (ss_switch){time, !out ? SS_SWITCH_IN : preempted ? SS_SWITCH_OUT_PREEMPTED : SS_SWITCH_OUT_BLOCKED};
        return 1;
    }
    if (header->type == PERF_RECORD_LOST) {
        *decoded = (ss_switch){0, SS_SWITCH_LOST};
        return 1;
    }
    return 0;
}

int ss_switch_ring_read(ss_switch_ring *ring, ss_switch *switches, int capacity) {
    uint64_t head = __atomic_load_n(&ring->control->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = ring->control->data_tail;
    int count = 0;
    while (tail < head && count < capacity) {
        struct perf_event_header header;
        copy_out(ring, tail, &header, sizeof header);
        if (header.size < sizeof header) { /* never written so by the kernel: give the ring up to here */
            tail = head;
            break;
        }
        if (decode(ring, tail, &header, &switches[count])) count++;
        tail += header.size;
    }
    __atomic_store_n(&ring->control->data_tail, tail, __ATOMIC_RELEASE);
    return count;
}

int ss_switch_ring_newest(const ss_switch_ring *ring, ss_switch *newest) {
    uint64_t head = __atomic_load_n(&ring->control->data_head, __ATOMIC_ACQUIRE);
    uint64_t offset = ring->control->data_tail;
    int found = 0;
    while (offset < head) {
        struct perf_event_header header;
        copy_out(ring, offset, &header, sizeof header);
        if (header.size < sizeof header) break;
        if (decode(ring, offset, &header, newest)) found = 1;
        offset += header.size;
    }
    return found;
}

int ss_switch_ring_filling(const ss_switch_ring *ring) {
    uint64_t head = __atomic_load_n(&ring->control->data_head, __ATOMIC_ACQUIRE);
    return head - ring->control->data_tail >= ring->data_size / 2;
}

int ss_switch_ring_unread(const ss_switch_ring *ring) {
    return __atomic_load_n(&ring->control->data_head, __ATOMIC_ACQUIRE) != ring->control->data_tail;
}

void ss_switch_ring_close(ss_switch_ring *ring) {
    if (!ring) return;
    munmap(ring->control, ring->mapped);
    free(ring);
}
