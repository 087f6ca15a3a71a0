/*
 * Where the profiler's own signal handlers lie: the sections SS_HANDLER_CODE and SS_CHAIN_CODE
 * put them in, bounded by the symbols the linker defines for a section whose name is a C
 * identifier. A walk of a stack the kernel copied while the thread ran inside the handler (a
 * preemption there) meets the handler's frames above the signal trampoline; they are the
 * profiler's, and the wait is the program's at the code the signal interrupted.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <stdint.h>

extern const char __start_ss_handler_code[] SS_HIDDEN;
extern const char __stop_ss_handler_code[] SS_HIDDEN;
extern const char __start_ss_chain_code[] SS_HIDDEN;
extern const char __stop_ss_chain_code[] SS_HIDDEN;

/* Whether frame address `pc` (an interrupted pc, or a return address, which may sit one past a
 * function's last call) lies in [low, high]. */
static int lies_in(uintptr_t pc, const char *low, const char *high) {
    return pc >= (uintptr_t)low && pc <= (uintptr_t)high;
}

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
