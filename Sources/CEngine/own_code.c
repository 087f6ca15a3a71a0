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
 * not a function of its own. A third: the preload library's Swift part, which program threads
 * run in the exit handler (the profile written) and in the C API's calls; its executable segments
 * are noted once it is loaded (ss_own_code_note_module), and a walk through them is left out
 * like the engine's (before its unwind tables are built, such a walk ends in it: nothing of it,
 * or of what it called, is kept).
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "stacksampler_engine_c.h"

#include <link.h>
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

/* The executable segments of the profiler's other module, published by their count (written
 * once, before any walk can need them). */
enum { OWN_SEGMENT_CAPACITY = 4 };
static ss_code_range own_segments[OWN_SEGMENT_CAPACITY];
static int own_segment_count;

typedef int (*phdr_callback)(struct dl_phdr_info *, size_t, void *);
typedef int (*dl_iterate_phdr_fn)(phdr_callback, void *);

/* Notes the executable segments of the module whose loaded segments hold `code` (data). */
static int note_own_segments(struct dl_phdr_info *info, size_t size, void *code) {
    (void)size;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        uintptr_t low = info->dlpi_addr + segment->p_vaddr;
        if (segment->p_type == PT_LOAD && (uintptr_t)code >= low && (uintptr_t)code < low + segment->p_memsz) holds = 1;
    }
    if (!holds) return 0;
    int count = 0;
    for (int i = 0; i < info->dlpi_phnum && count < OWN_SEGMENT_CAPACITY; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || !(segment->p_flags & PF_X)) continue;
        uintptr_t low = info->dlpi_addr + segment->p_vaddr;
        own_segments[count++] = (ss_code_range){low, low + segment->p_memsz};
    }
    __atomic_store_n(&own_segment_count, count, __ATOMIC_RELEASE);
    return 1;
}

void ss_own_code_note_module(const void *code) {
    static void *_Atomic real_symbol;
    dl_iterate_phdr_fn real = (dl_iterate_phdr_fn)ss_next_symbol("dl_iterate_phdr", &real_symbol);
    if (real && __atomic_load_n(&own_segment_count, __ATOMIC_ACQUIRE) == 0) real(note_own_segments, (void *)code);
}

static int in_own_module(uintptr_t pc) {
    int count = __atomic_load_n(&own_segment_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < count; i++)
        if (pc >= own_segments[i].low && pc <= own_segments[i].high) return 1;
    return 0;
}

/* The engine's code, or the profiler's other module's. */
static int in_engine(uintptr_t pc) { return lies_in(pc, __start_ss_engine_code, __stop_ss_engine_code) || in_own_module(pc); }
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
    /* A blocking call the engine made passes through its frame (wait_frames.c): the engine's work. */
    int caller = leaf;
    while (caller < count && in_interposer(frames[caller])) caller++;
    if (caller > leaf && caller < count && in_engine(frames[caller])) leaf = caller;
    int first = 0;
    if (leaf < count && in_engine(frames[leaf])) {
        /* The engine's own work, with what it called: left out up to the program's call. */
        while (leaf < count && (in_engine(frames[leaf]) || in_passthrough(frames[leaf]))) leaf++;
        /* No frame of the program's known: a walk that ended in the profiler's code (a profiler
         * thread's is never sampled). Nothing of it is the program's to show. */
        if (leaf == count) return 0;
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
