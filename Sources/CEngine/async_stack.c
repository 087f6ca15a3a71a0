/*
 * Swift async call stacks, in signal context. An async function's calls are tail calls
 * between partial functions, so the machine stack of a thread running a Swift job holds
 * only the innermost async function, called by the runtime's job-running function
 * (swift::runJobInEstablishedExecutorContext). Its callers live in the async contexts:
 * the innermost one is in r14 in that frame (the unwinder follows r14's CFI rules from
 * the interrupted value), and each context begins with
 *
 *     word 0  Parent        the caller's context (NULL in the task's first context)
 *     word 1  ResumeParent  where the caller resumes: a partial function of the caller
 *
 * (checked on x86-64 against the runtime whose layout version async_runtime.c accepts).
 * The chain is walked with the handler's reader (a fault ends the sample's chain, not
 * the sample: the handler's guard) and bounded by the sample's room; a cycle, a context
 * that cannot be read or a resume function that is not code leaves the machine stack,
 * counted. No allocation, no locks.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

static _Atomic uint64_t outcome_counts[SS_ASYNC_OUTCOMES];

static void count_outcome(int outcome) {
    atomic_fetch_add_explicit(&outcome_counts[outcome], 1, memory_order_relaxed);
}

void ss_async_count_fault(void) { count_outcome(SS_ASYNC_UNREADABLE); }

void ss_async_statistics(uint64_t *counts) {
    for (int i = 0; i < SS_ASYNC_OUTCOMES; i++) counts[i] = atomic_load_explicit(&outcome_counts[i], memory_order_relaxed);
}

/* A resume function is code: an address in an executable segment of a loaded module. Not
 * only where unwind rows cover it: the Swift runtime's own resume functions may have none
 * (withTaskCancellationHandler's, through which every NIO connection passes). */
static int is_code(const ss_module_index *index, uintptr_t address) {
    return index && ss_module_index_holds_code(index, address);
}

/* The chain walk through an entered index. Cycles are found with Brent's method (a
 * context that comes back to the one saved at the last power of two), in constant room. */
static int walk_chain(const ss_module_index *index, uintptr_t context, ss_memory_reader read, void *read_context,
                      uintptr_t *resumes, int capacity, int *outcome) {
    uintptr_t saved = context;
    int power = 1, steps = 0, count = 0;
    for (;;) {
        uintptr_t parent, resume;
        if (context == 0 || context % sizeof(uintptr_t) != 0 || read(context, &parent, read_context) != 0) {
            *outcome = SS_ASYNC_UNREADABLE;
            return count;
        }
        if (parent == 0) { *outcome = SS_ASYNC_COMPLETE; return count; } /* the task's first context */
        if (read(context + sizeof(uintptr_t), &resume, read_context) != 0) {
            *outcome = SS_ASYNC_UNREADABLE;
            return count;
        }
        if (!is_code(index, resume)) { *outcome = SS_ASYNC_NOT_CODE; return count; }
        if (count == capacity || count == SS_ASYNC_MAX_DEPTH) { *outcome = SS_ASYNC_TOO_DEEP; return count; }
        resumes[count++] = resume;
        if (parent == saved) { *outcome = SS_ASYNC_CYCLE; return count; }
        if (++steps == power) {
            saved = parent;
            power *= 2;
            steps = 0;
        }
        context = parent;
    }
}

int ss_async_chain(uintptr_t context, ss_memory_reader read, void *read_context, uintptr_t *resumes, int capacity,
                   int *outcome) {
    int buffer = -1;
    const ss_module_index *index = ss_module_index_enter(&buffer);
    int count = walk_chain(index, context, read, read_context, resumes, capacity, outcome);
    if (index) ss_module_index_leave(buffer);
    return count;
}

int ss_async_splice(const ss_module_index *index, const ss_async_probe *probe, ss_memory_reader read,
                    uintptr_t *frames, int count, int capacity, uint16_t *async_frames) {
    *async_frames = 0;
    if (probe->frame < 0 || probe->frame >= count) return -1;
    if (!probe->context_known) {
        count_outcome(SS_ASYNC_NO_CONTEXT);
        return -1;
    }
    int first = probe->frame + 1, outcome = SS_ASYNC_UNREADABLE;
    /* The chain goes after the machine frames it keeps; the executor frames it replaces are
     * overwritten only once it is known to be whole, so a failed chain leaves them. */
    int chain = walk_chain(index, probe->context, read, NULL, frames + count, capacity - count, &outcome);
    count_outcome(outcome);
    if (outcome != SS_ASYNC_COMPLETE) return -1;
    /* Stored one past the entry, like a return address: every reader of samples takes the
     * byte before a caller's frame as the call, here the resume function's first byte. */
    for (int i = 0; i < chain; i++) frames[first + i] = frames[count + i] + 1;
    *async_frames = (uint16_t)chain;
    return first + chain;
}
