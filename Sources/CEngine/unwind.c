/*
 * The stack walk (x86-64): from an interrupted pc, sp and rbp, frame by frame
 * through the rows of the published unwind tables (module_cache.c). Signal-safe:
 * no allocation, no locks, no libc calls, a few hundred bytes of stack. Memory is
 * read through a reader function: a plain load in the handler (under its fault
 * guard), process_vm_readv for a caller that must not fault.
 *
 * A frame whose pc has no row, an unknown rule, or a caller's sp that does not
 * move up the stack ends the walk there, marked: no caller is ever guessed. The one
 * exception is code no module accounts for (JIT code): there the walk steps by frame
 * pointer where every part of the step can be checked (frame_pointer_step.c), counts
 * those steps, and goes on by CFI once back in a module.
 * The outermost frames (_start, clone3: return address undefined in their CFI)
 * end it complete. A signal frame (glibc's __restore_rt, marked 'S' in its CIE)
 * continues from the ucontext the kernel saved on the stack, so a program's own
 * handler shows the code it interrupted; the profiler's own handler is left out there
 * (own_handler_code.c), so a stack copied inside it is the interrupted code's.
 *
 * rbx is followed like rbp (its CFI rules, from the interrupted value): the loader's
 * lazy-binding resolver realigns rsp and keeps its CFA in rbx. r14 is followed too: it holds
 * a Swift async function's context, which async_stack.c reads in the frame the Swift
 * runtime's job-running function called (the probe).
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <stddef.h>
#include <ucontext.h>
#include <unistd.h>
#include <string.h>
#include <sys/uio.h>

/* One step's registers. `fp_known` (`rbx_known`, `r14_known`) is 0 when rbp's (rbx's, r14's)
 * value is not known; r14 is followed only for a walk with a probe (`tracks_r14`). */
typedef struct {
    uintptr_t pc, sp, fp, rbx, r14;
    int fp_known, rbx_known, r14_known, tracks_r14;
} registers;

static int read_word(ss_memory_reader read, void *context, uintptr_t address, uintptr_t *value) {
    return read(address, value, context) == 0;
}

/* Moves `regs` from a signal frame to the context it interrupted. */
static int step_signal_frame(registers *regs, ss_memory_reader read, void *context) {
    uintptr_t gregs = regs->sp + offsetof(ucontext_t, uc_mcontext.gregs);
    uintptr_t pc, sp, fp, rbx, r14;
    if (!read_word(read, context, gregs + REG_RIP * sizeof(greg_t), &pc) ||
        !read_word(read, context, gregs + REG_RSP * sizeof(greg_t), &sp) ||
        !read_word(read, context, gregs + REG_RBP * sizeof(greg_t), &fp) ||
        !read_word(read, context, gregs + REG_RBX * sizeof(greg_t), &rbx) ||
        !read_word(read, context, gregs + REG_R14 * sizeof(greg_t), &r14))
        return 0;
    *regs = (registers){pc, sp, fp, rbx, r14, 1, 1, 1, regs->tracks_r14};
    return 1;
}

/* The caller's value of a register its row puts at `slot` (SS_SLOT_*) from `cfa`. */
static void follow_slot(int8_t slot, uintptr_t cfa, uintptr_t *value, int *known, ss_memory_reader read, void *context) {
    if (slot != SS_SLOT_UNCHANGED)
        *known = slot != SS_SLOT_UNKNOWN && read_word(read, context, cfa + 8 * (intptr_t)slot, value);
}

/* Moves `regs` to the caller by `row`. Returns 0 when the walk cannot go on. */
static int step_frame(registers *regs, const ss_unwind_row *row, ss_memory_reader read, void *context) {
    uintptr_t cfa;
    switch (row->kind) {
    case SS_ROW_CFA_RSP: cfa = regs->sp + (intptr_t)row->cfa_offset; break;
    case SS_ROW_CFA_RBP:
        if (!regs->fp_known) return 0;
        cfa = regs->fp + (intptr_t)row->cfa_offset;
        break;
    case SS_ROW_CFA_RBX:
        if (!regs->rbx_known) return 0;
        cfa = regs->rbx + (intptr_t)row->cfa_offset;
        break;
    case SS_ROW_PLT: cfa = regs->sp + ((regs->pc & 15) >= (uintptr_t)row->cfa_offset ? 16 : 8); break;
    default: return 0;
    }
    if (cfa <= regs->sp) return 0; /* the stack grows down: a caller's frame is above */
    uintptr_t return_address;
    if (!read_word(read, context, cfa - 8, &return_address)) return 0;
    follow_slot(row->rbp_slot, cfa, &regs->fp, &regs->fp_known, read, context);
    follow_slot(row->rbx_slot, cfa, &regs->rbx, &regs->rbx_known, read, context);
    if (regs->tracks_r14) follow_slot(row->r14_slot, cfa, &regs->r14, &regs->r14_known, read, context);
    regs->pc = return_address;
    regs->sp = cfa;
    return 1;
}

/* Notes in `probe` the frame at index `frame` (registers `callee`) if its caller, now at
 * `caller_pc` (a return address), is the job-running function. */
static void note_async_frame(ss_async_probe *probe, int frame, const registers *callee, uintptr_t caller_pc) {
    if (probe->frame >= 0 || caller_pc - 1 < probe->job_low || caller_pc - 1 >= probe->job_high) return;
    probe->frame = frame;
    probe->context_known = callee->r14_known;
    probe->context = callee->r14;
}

int ss_unwind_walk(const ss_module_index *index, uintptr_t pc, uintptr_t sp, uintptr_t fp, int fp_known, uintptr_t rbx,
                   int rbx_known, ss_memory_reader read, void *context, uintptr_t *frames, int capacity, int *outcome,
                   int *frame_pointer_steps) {
    return ss_unwind_walk_probed(index, pc, sp, fp, fp_known, rbx, rbx_known, read, context, frames, capacity, outcome,
                                 frame_pointer_steps, NULL);
}

/* A step by frame pointer out of a frame without CFI at `row` (NULL or SS_ROW_NONE); the
 * caller's rbx and r14 are not known after it. */
static int step_without_cfi(const ss_module_index *index, const ss_unwind_row *row, registers *regs, int exact_pc,
                            ss_memory_reader read, void *context) {
    ss_frame_registers frame = {regs->pc, regs->sp, regs->fp, regs->fp_known};
    if (!ss_frame_pointer_step(index, row, &frame, exact_pc, read, context)) return 0;
    *regs = (registers){frame.pc, frame.sp, frame.fp, 0, 0, frame.fp_known, 0, 0, regs->tracks_r14};
    return 1;
}

int ss_unwind_walk_probed(const ss_module_index *index, uintptr_t pc, uintptr_t sp, uintptr_t fp, int fp_known,
                          uintptr_t rbx, int rbx_known, ss_memory_reader read, void *context, uintptr_t *frames,
                          int capacity, int *outcome, int *frame_pointer_steps, ss_async_probe *probe) {
    registers regs = {pc, sp, fp, rbx, probe ? probe->r14 : 0, fp_known, rbx_known, probe != NULL, probe != NULL};
    int count = 0, steps_by_frame_pointer = 0;
    if (frame_pointer_steps) *frame_pointer_steps = 0;
    int exact_pc = 1; /* the interrupted pc, not a return address (whose call is at pc - 1) */
    for (;;) {
        if (count == capacity) { *outcome = SS_WALK_TRUNCATED; return count; }
        frames[count++] = regs.pc;
        const ss_unwind_row *row = index ? ss_module_index_find(index, exact_pc ? regs.pc : regs.pc - 1) : NULL;
        if (!row || row->kind == SS_ROW_NONE) {
            if (!step_without_cfi(index, row, &regs, exact_pc, read, context)) { *outcome = SS_WALK_ENDED_EARLY; return count; }
            if (frame_pointer_steps) *frame_pointer_steps = ++steps_by_frame_pointer;
            exact_pc = 0;
            continue;
        }
        if (row->kind == SS_ROW_OUTERMOST) { *outcome = SS_WALK_COMPLETE; return count; }
        if (row->kind == SS_ROW_SIGNAL) {
            if (!step_signal_frame(&regs, read, context)) { *outcome = SS_WALK_ENDED_EARLY; return count; }
            count = ss_leave_out_own_handler(frames, count);
            if (probe && probe->frame >= count) probe->frame = -1;
            exact_pc = 1;
        } else {
            registers callee = regs;
            if (!step_frame(&regs, row, read, context)) { *outcome = SS_WALK_ENDED_EARLY; return count; }
            if (probe) note_async_frame(probe, count - 1, &callee, regs.pc);
            exact_pc = 0;
        }
        if (regs.pc == 0) { *outcome = SS_WALK_COMPLETE; return count; } /* a zero return address ends a stack */
    }
}

/* process_vm_readv names the process by a thread of it: the caller's own, since the main
 * thread's (the pid) has no memory once it has ended by pthread_exit. */
int ss_read_memory_checked(uintptr_t address, uintptr_t *value, void *context) {
    (void)context;
    struct iovec local = {value, sizeof *value}, remote = {(void *)address, sizeof *value};
    return process_vm_readv(ss_current_tid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof *value ? 0 : -1;
}

int ss_read_memory_paged(uintptr_t address, uintptr_t *value, void *context) {
    ss_page_cache *cache = context;
    uintptr_t base = address & ~(uintptr_t)(sizeof cache->bytes - 1);
    if (address + sizeof *value > base + sizeof cache->bytes) return ss_read_memory_checked(address, value, NULL);
    if (!cache->valid || cache->base != base) {
        struct iovec local = {cache->bytes, sizeof cache->bytes}, remote = {(void *)base, sizeof cache->bytes};
        cache->valid = process_vm_readv(ss_current_tid(), &local, 1, &remote, 1, 0) == (ssize_t)sizeof cache->bytes;
        if (!cache->valid) return ss_read_memory_checked(address, value, NULL);
        cache->base = base;
    }
    memcpy(value, cache->bytes + (address - base), sizeof *value);
    return 0;
}

int ss_unwind_stack(uintptr_t pc, uintptr_t sp, uintptr_t fp, int fp_known, ss_memory_reader read, void *context,
                    uintptr_t *frames, int capacity, int *outcome, int *frame_pointer_steps) {
    int buffer = -1;
    const ss_module_index *index = ss_module_index_enter(&buffer);
    int count = ss_unwind_walk(index, pc, sp, fp, fp_known, 0, 0, read, context, frames, capacity, outcome,
                               frame_pointer_steps);
    if (index) ss_module_index_leave(buffer);
    int no_async_frame = -1;
    return ss_leave_out_own_code(frames, count, &no_async_frame);
}

int ss_unwind_context(const void *interrupted, ss_memory_reader read, void *context, uintptr_t *frames, int capacity,
                      int *outcome) {
    const greg_t *gregs = ((const ucontext_t *)interrupted)->uc_mcontext.gregs;
    int buffer = -1;
    const ss_module_index *index = ss_module_index_enter(&buffer);
    int count = ss_unwind_walk(index, (uintptr_t)gregs[REG_RIP], (uintptr_t)gregs[REG_RSP], (uintptr_t)gregs[REG_RBP], 1,
                               (uintptr_t)gregs[REG_RBX], 1, read, context, frames, capacity, outcome, NULL);
    if (index) ss_module_index_leave(buffer);
    return count;
}

__attribute__((noinline)) int ss_unwind_caller_stack(ss_memory_reader read, void *context, uintptr_t *frames, int capacity,
                                                     int *outcome) {
    /* This file is built with frame pointers: the caller's sp is just above our saved rbp
     * and return address, and its rbp is the one saved. The walk starts inside the call
     * instruction (return address - 1), whose rule is the caller's during the call. */
    uintptr_t *frame = __builtin_frame_address(0);
    uintptr_t return_address = (uintptr_t)__builtin_return_address(0);
    return ss_unwind_stack(return_address - 1, (uintptr_t)(frame + 2), frame[0], 1, read, context, frames, capacity, outcome,
                           NULL);
}
