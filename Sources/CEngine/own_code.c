/*
 * Where the profiler's own code lies, and walks with it left out. The sections (see
 * engine_internal.h) are bounded by the symbols the linker defines for a section whose name is
 * a C identifier; declared weak, so that a build without them (a compiler that ignores the
 * pragma) leaves every frame in.
 *
 * Two places put the profiler's code on a program thread's stack. A stack the kernel copied
 * while the thread ran inside the engine's signal handler (a preemption there) has the
 * handler's frames above the signal trampoline: the wait is the program's, at the code the
 * signal interrupted. And a program thread runs the engine's code in its hooks (an interposed
 * sigaction's bookkeeping, the attach of a thread as it starts, a key destructor, an atfork
 * handler): that time is the program's call's (sigaction, the thread's start, its end, fork),
 * not a function of its own.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <stdint.h>

extern const char __start_ss_handler_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __stop_ss_handler_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __start_ss_chain_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __stop_ss_chain_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __start_ss_engine_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __stop_ss_engine_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __start_ss_interposer_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __stop_ss_interposer_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __start_ss_passthrough_code[] __attribute__((weak)) SS_HIDDEN;
extern const char __stop_ss_passthrough_code[] __attribute__((weak)) SS_HIDDEN;

/* Whether frame address `pc` (an interrupted pc, or a return address, which may sit one past a
 * function's last call) lies in [low, high]; never for a section the build lacks. */
static int lies_in(uintptr_t pc, const char *low, const char *high) {
    return low && pc >= (uintptr_t)low && pc <= (uintptr_t)high;
}

static int in_engine(uintptr_t pc) { return lies_in(pc, __start_ss_engine_code, __stop_ss_engine_code); }
static int in_interposer(uintptr_t pc) { return lies_in(pc, __start_ss_interposer_code, __stop_ss_interposer_code); }
static int in_passthrough(uintptr_t pc) { return lies_in(pc, __start_ss_passthrough_code, __stop_ss_passthrough_code); }

int ss_leave_out_own_handler(uintptr_t *frames, int count) {
    /* frames[count - 1] is the trampoline; the frame below it, the handler the kernel called. */
    if (count < 2 || !lies_in(frames[count - 2], __start_ss_handler_code, __stop_ss_handler_code)) return count;
    for (int frame = 0; frame < count - 2; frame++) {
        if (!lies_in(frames[frame], __start_ss_chain_code, __stop_ss_chain_code)) continue;
        /* The program's handler, called through the profiler's: its frames stay, as they would
         * sit above the trampoline without the profiler. */
        frames[frame] = frames[count - 1];
        return frame + 1;
    }
    return 0;
}

int ss_leave_out_own_code(uintptr_t *frames, int count, int *async_frame) {
    int leaf = 0;
    while (leaf < count && !in_engine(frames[leaf]) && !in_interposer(frames[leaf])) leaf++;
    int first = 0;
    if (leaf < count && in_engine(frames[leaf])) {
        /* The engine's own work, with what it called: left out up to the program's call. */
        while (leaf < count && (in_engine(frames[leaf]) || in_passthrough(frames[leaf]))) leaf++;
        if (leaf == count) return count; /* no frame of the program's: a profiler thread's, never sampled */
        first = leaf;
    }
    int kept = 0, async = *async_frame;
    *async_frame = -1;
    for (int frame = first; frame < count; frame++) {
        /* An interposed function that called the C library's, whose frame is below it; a thread's start. */
        if ((frame > first && in_interposer(frames[frame])) || in_passthrough(frames[frame])) continue;
        if (frame == async) *async_frame = kept;
        /* A return address made the leaf: its call instruction, so that it is named as the call. */
        frames[kept++] = frame == first && first > 0 ? frames[frame] - 1 : frames[frame];
    }
    return kept;
}
