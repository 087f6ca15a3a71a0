/*
 * The C library's blocking calls, passed through a frame that saves the caller's frame pointer
 * where the unwind tables say, so that a thread asleep in one is walked whole in code built with
 * frame pointers (Swift, and C and C++ built -fno-omit-frame-pointer, as Ubuntu, Fedora and
 * Arch build their packages).
 *
 * A sleeping thread is walked without a signal, from the stack pointer and program counter
 * that /proc/self/task/TID/syscall gives (blocked_position.c); that file gives no other
 * register. The C library's frames unwind from the stack pointer alone, but the first frame of
 * code that keeps frame pointers has its base at rbp + 16, and rbp, live in the register while
 * the thread sleeps, is nowhere a walk can read it: the kernel keeps it on its own stack. Each
 * function here is three instructions around the real one: it pushes rbp, calls the C library's
 * function, pops rbp and returns, and its unwind entry says where rbp was pushed, so a walk that
 * reaches it reads the caller's rbp there, exactly, as it reads any saved register. Nothing else
 * is touched: the arguments (in registers, and the one a call may pass on the stack, syscall's
 * seventh, copied), rax (a variadic call's vector count) and the vector registers reach the real
 * function as the program passed them (the pointer is loaded into r11, the one scratch
 * register no call takes an argument in), its result comes back as it left it, and its errno is
 * its own. (sigwait, sigwaitinfo and sigtimedwait are interposed for the engine's signal, mask_hooks.c.)
 * The frame is the profiler's, so walks leave it out (own_code.c: ss_interposer_code).
 *
 * The calls the engine interposes in C for its signal (ppoll, sigwait…: wait_hooks.c,
 * mask_hooks.c) reach the C library through such a frame too, a hidden one of the same code
 * (ss_framed_ppoll…): the interposer's own frame keeps its frame pointer, which the walk then
 * reads there, and its caller's above it.
 *
 * The real functions are looked up as the library loads; a call that comes first (another
 * library's constructor) looks its function up then, all argument registers kept.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "wait_frames.h"

#include <errno.h>

#define SS_WAIT_NAME(slot, name) [slot] = #name,
static const char *const wait_names[SS_WAIT_SLOT_COUNT] = {SS_WAIT_FUNCTIONS(SS_WAIT_NAME) SS_FRAMED_CALLS(SS_WAIT_NAME)};

#define SS_ONE_SLOT(slot, name) +1
_Static_assert(0 SS_WAIT_FUNCTIONS(SS_ONE_SLOT) SS_FRAMED_CALLS(SS_ONE_SLOT) == SS_WAIT_SLOT_COUNT, "every slot has its function");
#undef SS_ONE_SLOT

/* The C library's functions, by slot (read by the code below, PC-relative). */
SS_HIDDEN void *_Atomic ss_wait_real[SS_WAIT_SLOT_COUNT];

__attribute__((constructor)) static void resolve_wait_functions(void) {
    for (int slot = 0; slot < SS_WAIT_SLOT_COUNT; slot++) ss_next_symbol(wait_names[slot], &ss_wait_real[slot]);
}

void *ss_wait_resolve(long slot) { return ss_real_function(wait_names[slot], &ss_wait_real[slot]); }

/* A call whose function the C library lacks fails, as the engine's other interposers do: -1 and
 * ENOSYS (a program linked against the C library has every function it calls, so only a call
 * made through a symbol looked up at run time, found here, can come to this). */
SS_HIDDEN long ss_wait_missing(void) {
    errno = ENOSYS;
    return -1;
}

#if defined(__x86_64__)
/* One function: rbp pushed (its unwind rule: saved at CFA - 16), the caller's first argument slot
 * on the stack copied below it (syscall's seventh argument, as FUTEX_WAIT_BITSET's mask: every
 * other function here takes its arguments in registers), the real function called through its
 * slot, the copy dropped and rbp popped. The slow path, out of line, keeps every argument register
 * (and rax) across the lookup, and without a function fails through ss_wait_missing; the stack
 * stays 16-byte aligned at each call. */
#define SS_WAIT_FRAME_NAMED(slot, name, visibility)                                                   \
    __asm__(".pushsection ss_interposer_code,\"ax\",@progbits\n"                                      \
            ".globl " #name "\n" visibility                                                           \
            ".type " #name ",@function\n" #name ":\n"                                                 \
            ".cfi_startproc\n"                                                                        \
            "pushq %rbp\n"                                                                            \
            ".cfi_def_cfa_offset 16\n"                                                                \
            ".cfi_offset %rbp, -16\n"                                                                 \
            "subq $8, %rsp\n"                                                                         \
            ".cfi_def_cfa_offset 24\n"                                                                \
            "pushq 24(%rsp)\n"                                                                        \
            ".cfi_def_cfa_offset 32\n"                                                                \
            "movq ss_wait_real+8*" #slot "(%rip), %r11\n"                                             \
            "testq %r11, %r11\n"                                                                      \
            "jz 2f\n"                                                                                 \
            "1:\n"                                                                                    \
            "callq *%r11\n"                                                                           \
            "3:\n"                                                                                    \
            "addq $16, %rsp\n"                                                                        \
            ".cfi_def_cfa_offset 16\n"                                                                \
            "popq %rbp\n"                                                                             \
            ".cfi_def_cfa_offset 8\n"                                                                 \
            ".cfi_restore %rbp\n"                                                                     \
            "retq\n"                                                                                  \
            ".cfi_def_cfa_offset 32\n"                                                                \
            ".cfi_offset %rbp, -16\n"                                                                 \
            "2:\n"                                                                                    \
            "pushq %rdi\n.cfi_def_cfa_offset 40\n"                                                    \
            "pushq %rsi\n.cfi_def_cfa_offset 48\n"                                                    \
            "pushq %rdx\n.cfi_def_cfa_offset 56\n"                                                    \
            "pushq %rcx\n.cfi_def_cfa_offset 64\n"                                                    \
            "pushq %r8\n.cfi_def_cfa_offset 72\n"                                                     \
            "pushq %r9\n.cfi_def_cfa_offset 80\n"                                                     \
            "pushq %rax\n.cfi_def_cfa_offset 88\n"                                                    \
            "subq $8, %rsp\n.cfi_def_cfa_offset 96\n"                                                 \
            "movl $" #slot ", %edi\n"                                                                 \
            "callq ss_wait_resolve\n"                                                                 \
            "movq %rax, %r11\n"                                                                       \
            "addq $8, %rsp\n.cfi_def_cfa_offset 88\n"                                                 \
            "popq %rax\n.cfi_def_cfa_offset 80\n"                                                     \
            "popq %r9\n.cfi_def_cfa_offset 72\n"                                                      \
            "popq %r8\n.cfi_def_cfa_offset 64\n"                                                      \
            "popq %rcx\n.cfi_def_cfa_offset 56\n"                                                     \
            "popq %rdx\n.cfi_def_cfa_offset 48\n"                                                     \
            "popq %rsi\n.cfi_def_cfa_offset 40\n"                                                     \
            "popq %rdi\n.cfi_def_cfa_offset 32\n"                                                     \
            "testq %r11, %r11\n"                                                                      \
            "jnz 1b\n"                                                                                \
            "callq ss_wait_missing\n"                                                                 \
            "jmp 3b\n"                                                                                \
            ".cfi_endproc\n"                                                                          \
            ".size " #name ", .-" #name "\n"                                                          \
            ".popsection\n");

#define SS_WAIT_FRAME(slot, name) SS_WAIT_FRAME_NAMED(slot, name, "")
#define SS_FRAMED_CALL(slot, name) SS_WAIT_FRAME_NAMED(slot, ss_framed_##name, ".hidden ss_framed_" #name "\n")
SS_WAIT_FUNCTIONS(SS_WAIT_FRAME)
SS_FRAMED_CALLS(SS_FRAMED_CALL)
#else
#error "the frames are written for x86-64, as are the engine's register sets"
#endif
