/*
 * Wall mode: the stack a thread had at the moment it left its core, copied by the kernel as it
 * left. A software event counting the thread's context switches samples each one (sample
 * period 1) with the thread's user registers and the top STACK_BYTES of its user stack
 * (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER): for a thread preempted in user space, the
 * registers the interrupt saved, so the stack where it waits for a core, exactly. The sampler
 * thread walks that copy with the engine's tables, off the signal path, when it counts the
 * ticks of that wait. The kernel takes these samples only for a user allowed to profile it
 * (the switch happens in the kernel: CAP_PERFMON, or perf_event_paranoid at most 1), and the
 * rings, 260 KiB each, are opened only by a process that may lock memory (CAP_IPC_LOCK: past
 * the user's perf budget the kernel charges them to the program's RLIMIT_MEMLOCK otherwise);
 * elsewhere the waits are counted at the sample nearest in CPU time, as before.
 * Each switch costs the thread about 3 us more (the copy), so the sampler keeps these rings
 * only on threads that switch seldom of their own accord (PreemptionSnapshots). Rings are read by
 * one thread at a time, never in signal context.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <asm/perf_regs.h>
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The stack copied at each switch: enough for a few dozen frames of C. A walk that needs more
 * ends early, and its wait is counted as if there were no copy. */
enum { STACK_BYTES = 4096 };
/* 256 KiB: some 60 switches, those of 50 ms (the sampler's longest wait between two reads) of
 * a thread preempted every millisecond. */
enum { DATA_PAGES = 64 };
_Static_assert((DATA_PAGES & (DATA_PAGES - 1)) == 0, "the kernel maps a power of two of data pages");
/* The switch record comes a microsecond or so after the sample, in the same switch. */
enum { MATCH_NS = 50000 };

/* The registers sampled, in the order the kernel writes them (ascending register number). */
enum { REGISTER_COUNT = 4 };
static const uint64_t register_mask =
    1ull << PERF_REG_X86_BX | 1ull << PERF_REG_X86_BP | 1ull << PERF_REG_X86_SP | 1ull << PERF_REG_X86_IP;

struct ss_preempt_ring {
    ss_perf_ring ring;
};

/* Whether the process may lock memory past its limit (CAP_IPC_LOCK, which root has): the kernel
 * charges a ring's pages past the user's perf budget to the process's pinned memory, checked
 * against RLIMIT_MEMLOCK, which is the program's. */
static int can_lock_memory(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0) return 0;
    return (data[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1;
}

int ss_preempt_ring_bound(void) { return can_lock_memory() ? 16 : 0; }

ss_preempt_ring *ss_preempt_ring_open(int32_t tid, int *error) {
    struct perf_event_attr attr;
    ss_perf_software_attr(&attr, PERF_COUNT_SW_CONTEXT_SWITCHES); /* not exclude_kernel: the switch is the kernel's */
    attr.sample_period = 1;
    attr.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = register_mask;
    attr.sample_stack_user = STACK_BYTES;
    return ss_perf_ring_open(&attr, tid, DATA_PAGES, sizeof(ss_preempt_ring), error);
}

/* A sample record's fields after its header: time, then the registers' ABI and values (none
 * when the ABI is PERF_SAMPLE_REGS_ABI_NONE), then the stack's size, bytes and the size the
 * kernel could copy (none when the size is 0). */
typedef struct {
    uint64_t time;
    uint64_t registers[REGISTER_COUNT]; /* bx, bp, sp, ip */
    int has_registers;
    uint64_t stack_offset, stack_length;
} snapshot;

static int decode(const ss_perf_ring *ring, uint64_t offset, const struct perf_event_header *header, snapshot *out) {
    if (header->type != PERF_RECORD_SAMPLE) return 0;
    uint64_t at = offset + sizeof *header, end = offset + header->size, abi = 0, size = 0;
    if (at + 16 > end) return 0;
    ss_perf_ring_copy(ring, at, &out->time, 8);
    ss_perf_ring_copy(ring, at + 8, &abi, 8);
    at += 16;
    out->has_registers = abi != PERF_SAMPLE_REGS_ABI_NONE;
    out->stack_length = 0;
    if (out->has_registers) {
        if (at + sizeof out->registers > end) return 0;
        ss_perf_ring_copy(ring, at, out->registers, sizeof out->registers);
        at += sizeof out->registers;
    }
    if (at + 8 > end) return 1;
    ss_perf_ring_copy(ring, at, &size, 8);
    at += 8;
    if (size == 0 || at + size + 8 > end) return 1;
    uint64_t copied = 0;
    ss_perf_ring_copy(ring, at + size, &copied, 8);
    out->stack_offset = at;
    out->stack_length = copied < size ? copied : size;
    return 1;
}

/* The copied stack, as the walk reads it: from the sampled sp up. */
typedef struct {
    uintptr_t low;
    uint64_t length;
    const unsigned char *bytes;
} copied_stack;

static int read_copied(uintptr_t address, uintptr_t *value, void *context) {
    const copied_stack *stack = context;
    if (address < stack->low || address - stack->low + sizeof *value > stack->length) return -1;
    memcpy(value, stack->bytes + (address - stack->low), sizeof *value);
    return 0;
}

/* Walks `found` into `sample`: its depth, or 0 if it has no registers. A walk through the Swift
 * runtime's job-running function ends early: a Swift task's sample takes its async chain in
 * place of the executor's frames (async_stack.c), and that chain is in the heap, which has moved
 * on since the copy; so that wait is counted at the nearest sample, which has it. */
static int walk(const ss_perf_ring *ring, const snapshot *found, ss_sample *sample, int capacity, int *outcome) {
    static unsigned char bytes[STACK_BYTES]; /* one reader at a time: the sampler thread */
    if (!found->has_registers) return 0;
    uint64_t length = found->stack_length < sizeof bytes ? found->stack_length : sizeof bytes;
    ss_perf_ring_copy(ring, found->stack_offset, bytes, (size_t)length);
    copied_stack stack = {(uintptr_t)found->registers[2], length, bytes};
    ss_async_probe probe = {.frame = -1};
    int async = ss_async_runtime_job_range(&probe.job_low, &probe.job_high);
    int buffer = -1;
    const ss_module_index *index = ss_module_index_enter(&buffer);
    int depth = ss_unwind_walk_probed(index, (uintptr_t)found->registers[3], (uintptr_t)found->registers[2],
                                      (uintptr_t)found->registers[1], 1, (uintptr_t)found->registers[0], 1, read_copied,
                                      &stack, sample->frames, capacity, outcome, NULL, async ? &probe : NULL);
    if (index) ss_module_index_leave(buffer);
    depth = ss_leave_out_own_code(sample->frames, depth, &probe.frame);
    if (probe.frame >= 0) *outcome = SS_WALK_ENDED_EARLY;
    return depth;
}

/* Moves `*tail` past the records taken at or before `time_ns`, keeping the newest of them in
 * `*newest`: whether there was one. */
static int pass_until(const ss_perf_ring *ring, uint64_t time_ns, uint64_t *tail, snapshot *newest) {
    uint64_t head = __atomic_load_n(&ring->control->data_head, __ATOMIC_ACQUIRE);
    snapshot decoded;
    int found = 0;
    while (*tail < head) {
        struct perf_event_header header;
        ss_perf_ring_copy(ring, *tail, &header, sizeof header);
        if (header.size < sizeof header) { /* never written so by the kernel: give the ring up to here */
            *tail = head;
            break;
        }
        if (decode(ring, *tail, &header, &decoded)) {
            if (decoded.time > time_ns) break;
            *newest = decoded;
            found = 1;
        }
        *tail += header.size;
    }
    return found;
}

int ss_preempt_ring_walk(ss_preempt_ring *snapshots, uint64_t since_ns, uint64_t switch_ns, ss_sample *sample, int capacity) {
    ss_perf_ring *ring = &snapshots->ring;
    uint64_t tail = ring->control->data_tail;
    snapshot newest;
    int result = 0;
    if (pass_until(ring, switch_ns, &tail, &newest) && newest.time > since_ns && switch_ns - newest.time <= MATCH_NS) {
        int outcome = SS_WALK_ENDED_EARLY;
        int depth = walk(ring, &newest, sample, capacity, &outcome);
        if (depth > 0) {
            sample->depth = (uint16_t)depth;
            sample->flags = SS_SAMPLE_WITHOUT_SIGNAL | (outcome == SS_WALK_TRUNCATED ? SS_SAMPLE_TRUNCATED : 0);
            sample->time_ns = newest.time;
            result = outcome == SS_WALK_ENDED_EARLY ? -1 : 1;
        }
    }
    /* Read only once walked: the copy lives in the ring until the tail passes it. */
    __atomic_store_n(&ring->control->data_tail, tail, __ATOMIC_RELEASE);
    return result;
}

void ss_preempt_ring_drop(ss_preempt_ring *snapshots, uint64_t time_ns) {
    uint64_t tail = snapshots->ring.control->data_tail;
    snapshot ignored;
    pass_until(&snapshots->ring, time_ns, &tail, &ignored);
    __atomic_store_n(&snapshots->ring.control->data_tail, tail, __ATOMIC_RELEASE);
}

void ss_preempt_ring_close(ss_preempt_ring *snapshots) {
    if (!snapshots) return;
    ss_perf_ring_close(&snapshots->ring);
}
