/*
 * One step of the walk (unwind.c) out of a frame in code without CFI, by its frame pointer,
 * taken only where each part of it is checked; otherwise the walk ends there (counted), and
 * no caller is guessed:
 *   - the pc is in code no module accounts for (code_ranges.c: JIT code, which V8, the JVM,
 *     .NET and LuaJIT generate with frame pointers);
 *   - the frame pointer lies in the stack above the stack pointer (at most MAX_FRAME_BYTES),
 *     8-aligned, and the caller's return address and saved frame pointer are read from it;
 *   - the return address lands in code (a module's CFI, or such a range again) just after a
 *     call instruction (E8 rel32, or FF /2 in any of its operand forms).
 * Where the caller's code is a module's, the walk goes on by its CFI (the saved frame pointer is
 * then just the caller's rbp); where it is without CFI again, the next step checks that the
 * saved frame pointer lies above this one. At the interrupted pc (the leaf), the frame may not
 * be set up yet or any more: at `push rbp`, `mov rbp, rsp`, `pop rbp` and `ret` the return
 * address is found from the stack pointer instead. Signal-safe: memory through `read`.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <string.h>

/* The largest frame a step crosses (a larger distance is taken for a corrupt frame pointer). */
enum { MAX_FRAME_BYTES = 1 << 20 };

/* The 8 bytes at `address`, lowest first. */
static int read_bytes(ss_memory_reader read, void *context, uintptr_t address, uint8_t bytes[8]) {
    uintptr_t word;
    if (read(address, &word, context) != 0) return 0;
    memcpy(bytes, &word, sizeof word);
    return 1;
}

/* Bytes a ModRM operand takes after the ModRM byte itself (SIB, displacement); `sib` may be
 * read only when `has_sib_byte` (the instruction is long enough to hold it). */
static int operand_bytes(uint8_t modrm, int has_sib_byte, uint8_t sib) {
    int mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3) return 0;
    if (rm == 4) {
        if (!has_sib_byte) return -1;
        if (mod == 0) return (sib & 7) == 5 ? 5 : 1;
        return 1 + (mod == 1 ? 1 : 4);
    }
    if (mod == 0) return rm == 5 ? 4 : 0;
    return mod == 1 ? 1 : 4;
}

/* Whether the instruction that ends at `before[8]` (the 8 bytes before a return address) is a
 * call: E8 rel32, or FF /2 (call through a register or memory), whatever its operand's length. */
static int follows_call(const uint8_t before[8]) {
    if (before[3] == 0xE8) return 1;
    for (int length = 2; length <= 7; length++) {
        const uint8_t *opcode = &before[8 - length];
        if (opcode[0] != 0xFF || ((opcode[1] >> 3) & 7) != 2) continue;
        if (2 + operand_bytes(opcode[1], length >= 3, length >= 3 ? opcode[2] : 0) == length) return 1;
    }
    return 0;
}

/* Whether `address` (a return address) is in code just after a call: a module's code with CFI
 * or a range without, and the bytes before it a call instruction. */
static int returns_after_call(const ss_module_index *index, uintptr_t address, ss_memory_reader read, void *context) {
    if (address < 8) return 0;
    const ss_unwind_row *row = index ? ss_module_index_find(index, address - 1) : NULL;
    int in_module = row && row->kind != SS_ROW_NONE;
    if (!in_module && !ss_code_ranges_contain(address - 8, address - 1)) return 0;
    uint8_t before[8];
    return read_bytes(read, context, address - 8, before) && follows_call(before);
}

int ss_frame_pointer_step(const ss_module_index *index, const ss_unwind_row *row, ss_frame_registers *regs, int exact_pc,
                          ss_memory_reader read, void *context) {
    if (!ss_code_ranges_contain(regs->pc, regs->pc)) {
        if (!row) ss_code_ranges_want_refresh(); /* outside every module's rows: maybe JIT code mapped since */
        return 0;
    }
    uintptr_t slot = 0, saved_fp_slot = 0; /* where the return address and the caller's rbp are (0: rbp unchanged) */
    uint8_t code[8];
    if (exact_pc && ss_code_ranges_contain(regs->pc, regs->pc + 7) && read_bytes(read, context, regs->pc, code)) {
        if (code[0] == 0x55 || code[0] == 0xC3 || code[0] == 0xC2) { /* push rbp, ret: nothing of the frame on the stack */
            slot = regs->sp;
        } else if (code[0] == 0x48 && ((code[1] == 0x89 && code[2] == 0xE5) || (code[1] == 0x8B && code[2] == 0xEC))) {
            slot = regs->sp + 8; /* mov rbp, rsp: rbp just pushed */
            saved_fp_slot = regs->sp;
        } else if (code[0] == 0x5D && (code[1] == 0xC3 || code[1] == 0xC2)) { /* pop rbp; ret */
            slot = regs->sp + 8;
            saved_fp_slot = regs->sp;
        }
    }
    if (!slot) {
        uintptr_t fp = regs->fp;
        if (!regs->fp_known || fp < regs->sp || fp - regs->sp > MAX_FRAME_BYTES || (fp & 7) != 0) return 0;
        slot = fp + 8;
        saved_fp_slot = fp;
    }
    uintptr_t return_address, caller_fp = regs->fp;
    if (read(slot, &return_address, context) != 0) return 0;
    if (saved_fp_slot && read(saved_fp_slot, &caller_fp, context) != 0) return 0;
    if (!returns_after_call(index, return_address, read, context)) return 0;
    regs->pc = return_address;
    regs->sp = slot + 8;
    regs->fp = caller_fp;
    regs->fp_known = regs->fp_known || saved_fp_slot != 0;
    return 1;
}
