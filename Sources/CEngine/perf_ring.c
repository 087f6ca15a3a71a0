/*
 * Wall mode: a perf_event ring buffer of one thread's event, mapped by the sampler thread and
 * read by it without a system call (switch_ring.c, preempt_snapshot.c). The event's descriptor
 * is closed as soon as the ring is mapped: the mapping keeps the event alive, so no descriptor
 * of the program's is taken. The mapping is not inherited by fork (the kernel marks it
 * VM_DONTCOPY). Never called in signal context.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void ss_perf_software_attr(struct perf_event_attr *attr, uint64_t config) {
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->type = PERF_TYPE_SOFTWARE;
    attr->config = config;
    attr->use_clockid = 1;
    attr->clockid = CLOCK_MONOTONIC;
    attr->exclude_hv = 1;
}

void *ss_perf_ring_open(struct perf_event_attr *attr, int32_t tid, size_t data_pages, size_t size, int *error) {
    ss_perf_ring *ring = malloc(size);
    if (!ring) {
        *error = -ENOMEM;
        return NULL;
    }
    /* No wake-up before the ring is full: nobody polls it. */
    attr->watermark = 1;
    attr->wakeup_watermark = UINT32_MAX;
    int fd = ss_perf_event_open(attr, tid);
    if (fd < 0) {
        *error = fd;
        free(ring);
        return NULL;
    }
    /* Mapped and closed at once, each only if the number is still the ring's event. */
    ss_file_identity identity;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), mapped = (1 + data_pages) * page;
    void *base = ss_borrowed_identify(fd, &identity) == 0 ? mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                                                                 : MAP_FAILED;
    *error = base == MAP_FAILED ? -errno : 0;
    ss_borrowed_close(fd, &identity);
    if (base == MAP_FAILED) {
        free(ring);
        return NULL;
    }
    ring->control = base;
    ring->data = (const unsigned char *)base + page;
    ring->data_size = (uint64_t)data_pages * page;
    ring->mapped = mapped;
    return ring;
}

/* The kernel makes the data a power of two of pages: the offset is masked, and the copy is at
 * most two pieces (a byte at a time, each offset divided by the size, was 7 % of the sampler
 * thread's CPU on redis). */
void ss_perf_ring_copy(const ss_perf_ring *ring, uint64_t offset, void *into, size_t length) {
    uint64_t start = offset & (ring->data_size - 1);
    size_t first = length < ring->data_size - start ? length : (size_t)(ring->data_size - start);
    memcpy(into, ring->data + start, first);
    memcpy((unsigned char *)into + first, ring->data, length - first);
}

void ss_perf_ring_close(ss_perf_ring *ring) {
    munmap(ring->control, ring->mapped);
    free(ring);
}
