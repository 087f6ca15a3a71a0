/*
 * Wall mode: when a thread leaves and regains its core, as the kernel tells it. A perf_event
 * software dummy event on the thread with context_switch records (PERF_RECORD_SWITCH: in, out,
 * and out while still runnable, PERF_RECORD_MISC_SWITCH_OUT_PREEMPT), stamped with
 * CLOCK_MONOTONIC, written by the kernel into a ring mapped here and read by the sampler
 * thread without a system call (perf_ring.c: no descriptor stays open). The event never
 * signals (no O_ASYNC). Never called in signal context.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <unistd.h>

/* Data pages of each ring: 4 KiB hold 256 records of 16 bytes (header, time). */
enum { DATA_PAGES = 1 };
_Static_assert((DATA_PAGES & (DATA_PAGES - 1)) == 0, "the kernel maps a power of two of data pages (ss_perf_ring_copy masks offsets)");

struct ss_switch_ring {
    ss_perf_ring ring;
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
    ss_perf_software_attr(&attr, PERF_COUNT_SW_DUMMY);
    attr.context_switch = 1;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TIME;
    attr.exclude_kernel = 1;
    return ss_perf_ring_open(&attr, tid, DATA_PAGES, sizeof(ss_switch_ring), error);
}

/* The record at `offset`, whose header is `header`, as a switch in `*decoded`: 1 for a switch or
 * a loss, 0 for a record of another kind. */
static int decode(const ss_perf_ring *ring, uint64_t offset, const struct perf_event_header *header, ss_switch *decoded) {
    if (header->type == PERF_RECORD_SWITCH && header->size >= sizeof *header + sizeof(uint64_t)) {
        uint64_t time;
        ss_perf_ring_copy(ring, offset + sizeof *header, &time, sizeof time);
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
    uint64_t head = __atomic_load_n(&ring->ring.control->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = ring->ring.control->data_tail;
    int count = 0;
    while (tail < head && count < capacity) {
        struct perf_event_header header;
        ss_perf_ring_copy(&ring->ring, tail, &header, sizeof header);
        if (header.size < sizeof header) { /* never written so by the kernel: give the ring up to here */
            tail = head;
            break;
        }
        if (decode(&ring->ring, tail, &header, &switches[count])) count++;
        tail += header.size;
    }
    __atomic_store_n(&ring->ring.control->data_tail, tail, __ATOMIC_RELEASE);
    return count;
}

int ss_switch_ring_newest(const ss_switch_ring *ring, ss_switch *newest) {
    uint64_t head = __atomic_load_n(&ring->ring.control->data_head, __ATOMIC_ACQUIRE);
    uint64_t offset = ring->ring.control->data_tail;
    int found = 0;
    while (offset < head) {
        struct perf_event_header header;
        ss_perf_ring_copy(&ring->ring, offset, &header, sizeof header);
        if (header.size < sizeof header) break;
        if (decode(&ring->ring, offset, &header, newest)) found = 1;
        offset += header.size;
    }
    return found;
}

int ss_switch_ring_filling(const ss_switch_ring *ring) {
    uint64_t head = __atomic_load_n(&ring->ring.control->data_head, __ATOMIC_ACQUIRE);
    return head - ring->ring.control->data_tail >= ring->ring.data_size / 2;
}

int ss_switch_ring_unread(const ss_switch_ring *ring) {
    return __atomic_load_n(&ring->ring.control->data_head, __ATOMIC_ACQUIRE) != ring->ring.control->data_tail;
}

void ss_switch_ring_close(ss_switch_ring *ring) {
    if (!ring) return;
    ss_perf_ring_close(&ring->ring);
}
