/*
 * Lock-free bounded buffer of fixed-size sample slots: many writers (signal
 * handlers on any thread), one reader (the sampler thread). Each slot carries
 * a sequence number (Vyukov's bounded queue): a writer may take slot `pos`
 * only when its sequence equals `pos`; the reader may take it when the
 * sequence is `pos + 1`. A full buffer drops the sample and counts it: the
 * handler never waits for the reader.
 *
 * Each slot stores its sequence minus its index, so a fresh page of zeros is
 * an empty buffer. The pages are faulted in by ss_buffer_prefault_next(), one
 * chunk a call, which the sampler thread calls as it starts: a first touch
 * inside the handler would cost a page fault per sample until the ring had gone
 * round once, and faulting 2 MB in at creation (MAP_POPULATE) added over a
 * millisecond to the start of every profiled program. In chunks, a session that
 * stops early (a program that ran 2 ms) does not wait for the rest: the pages
 * not yet faulted in then fault in on first use, in the handler.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

typedef struct {
    _Atomic uint64_t sequence; /* minus the slot's index */
    uint64_t pad;
    ss_sample sample; /* followed by the frames */
} slot_header;

static unsigned char *slots_base;
static size_t slot_bytes;
static uint64_t slot_count;
static _Atomic uint64_t write_position;
static uint64_t read_position;
static _Atomic uint64_t dropped;
static size_t prefaulted_bytes; /* sampler thread only */

/* Faulted in per ss_buffer_prefault_next() call: about 0.1 ms. */
#define PREFAULT_CHUNK_BYTES ((size_t)256 * 1024)

static slot_header *slot_at(uint64_t position) {
    return (slot_header *)(slots_base + (position % slot_count) * slot_bytes);
}

/* The sequence of the slot that holds `position`. */
static uint64_t sequence_at(uint64_t position, memory_order order) {
    return atomic_load_explicit(&slot_at(position)->sequence, order) + position % slot_count;
}

static void set_sequence(uint64_t position, uint64_t sequence) {
    atomic_store_explicit(&slot_at(position)->sequence, sequence - position % slot_count, memory_order_release);
}

int ss_buffer_create(uint32_t slots, uint32_t max_frames) {
    if (slots == 0 || max_frames == 0) return SS_ERR_BAD_CONFIG;
    size_t bytes = sizeof(slot_header) + sizeof(uintptr_t) * (size_t)max_frames;
    bytes = (bytes + 63) & ~(size_t)63;
    void *memory = mmap(NULL, bytes * slots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return SS_ERR_NO_MEMORY;
    slots_base = memory;
    slot_bytes = bytes;
    slot_count = slots;
    atomic_store(&write_position, 0);
    read_position = 0;
    prefaulted_bytes = 0;
    return SS_OK;
}

int ss_buffer_prefault_next(void) {
    size_t total = slot_bytes * slot_count;
    if (!slots_base || prefaulted_bytes >= total) return 0;
    size_t length = total - prefaulted_bytes < PREFAULT_CHUNK_BYTES ? total - prefaulted_bytes : PREFAULT_CHUNK_BYTES;
    /* Faults the pages in without writing to them: handlers may already be writing samples.
     * Before Linux 5.14 (EINVAL) the pages are left to fault in on first use. */
    if (madvise(slots_base + prefaulted_bytes, length, MADV_POPULATE_WRITE) != 0) {
        prefaulted_bytes = total;
        return 0;
    }
    prefaulted_bytes += length;
    return prefaulted_bytes < total;
}

void ss_buffer_reset(void) {
    if (!slots_base) return;
    /* Dropping the pages leaves zeros (all empty) without copying 2 MB in the child; the
     * child's sampler thread faults them in again. */
    if (madvise(slots_base, slot_bytes * slot_count, MADV_DONTNEED) != 0)
        memset(slots_base, 0, slot_bytes * slot_count);
    atomic_store(&write_position, 0);
    read_position = 0;
    prefaulted_bytes = 0;
}

ss_sample *ss_buffer_claim(void) {
    uint64_t position = atomic_load_explicit(&write_position, memory_order_relaxed);
    for (;;) {
        slot_header *slot = slot_at(position);
        uint64_t sequence = sequence_at(position, memory_order_acquire);
        if (sequence == position) {
            if (atomic_compare_exchange_weak_explicit(&write_position, &position, position + 1,
                                                      memory_order_relaxed, memory_order_relaxed))
                return &slot->sample;
        } else if (sequence < position) {
            atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
            return NULL;
        } else {
            position = atomic_load_explicit(&write_position, memory_order_relaxed);
        }
    }
}

static slot_header *header_of(ss_sample *sample) {
    return (slot_header *)((unsigned char *)sample - offsetof(slot_header, sample));
}

void ss_buffer_publish(ss_sample *sample) {
    slot_header *slot = header_of(sample);
    /* The slot's stored value is unchanged since the claim: bump it by one. */
    uint64_t stored = atomic_load_explicit(&slot->sequence, memory_order_relaxed);
    atomic_store_explicit(&slot->sequence, stored + 1, memory_order_release);
}

const ss_sample *ss_buffer_peek(void) {
    if (!slots_base) return NULL;
    uint64_t sequence = sequence_at(read_position, memory_order_acquire);
    return sequence == read_position + 1 ? &slot_at(read_position)->sample : NULL;
}

void ss_buffer_advance(void) {
    set_sequence(read_position, read_position + slot_count);
    read_position++;
}

uint64_t ss_buffer_dropped(void) {
    return atomic_load_explicit(&dropped, memory_order_relaxed);
}
