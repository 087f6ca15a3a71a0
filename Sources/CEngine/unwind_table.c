/*
 * Unwind tables, compiled outside signal context from a loaded module's
 * .eh_frame (x86-64 only). The FDEs listed by .eh_frame_hdr have their CFI
 * programs run once, and each address range becomes a compact row: how to
 * find the CFA (rsp, rbp or rbx plus an offset, or the PLT rule), where the
 * caller's rbp, rbx and r14 were saved, and whether this is the outermost frame
 * or a signal frame. The return address is always at CFA-8 (rows where it is not
 * say "unknown"). A table lives in its own mapping and holds copies only: the
 * handler never reads the module's memory through it, so a module unmapped
 * behind the profiler's back cannot make a walk fault.
 *
 * Parse only while the module cannot be unmapped (inside a dl_iterate_phdr
 * callback, which holds the loader's lock). Every read of the module is checked
 * against its PT_LOAD segments first.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <link.h>
#include <string.h>
#include <sys/mman.h>

enum {
    REG_NUMBER_RBX = 3, /* the CFA of the loader's lazy-binding resolver */
    REG_NUMBER_RBP = 6,
    REG_NUMBER_RSP = 7,
    REG_NUMBER_R14 = 14, /* the Swift async context register (async_stack.c) */
    REG_NUMBER_RA = 16,
    STATE_STACK_DEPTH = 16,
    PE_OMIT = 0xff,
};

/* The rule of one register in the CFI state machine (only rbp, rbx, r14 and the return address matter). */
typedef enum { RULE_SAME, RULE_OFFSET, RULE_UNDEFINED, RULE_OTHER } register_rule;

typedef struct {
    int cfa_register;          /* DWARF number; -1 for an expression */
    int64_t cfa_offset;
    uint8_t cfa_expression;    /* SS_ROW_PLT or SS_ROW_UNKNOWN when cfa_register is -1 */
    int64_t plt_threshold;
    register_rule rbp_rule, rbx_rule, ra_rule, r14_rule;
    int64_t rbp_offset, rbx_offset, ra_offset, r14_offset;
} cfi_state;

typedef struct {
    const uint8_t *at, *end;
    int failed;
} cursor;

typedef struct {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_encoding;
    int has_augmentation_data;
    int signal_frame;
    const uint8_t *instructions, *instructions_end;
} cie_info;

/* The table being built: rows grow in a private mapping (mremap), not on the heap. */
typedef struct {
    ss_unwind_table *table;
    size_t capacity; /* rows */
    uintptr_t bias;
    int failed;
    const uint8_t *cie_at; /* the last CIE parsed, shared by most FDEs */
    cie_info cie;
} table_builder;

/* Whether the module maps [start, start + length): reads stay inside its PT_LOAD segments. */
static int readable(const struct dl_phdr_info *info, const void *start, size_t length) {
    uintptr_t low = (uintptr_t)start, high = low + length;
    if (high < low) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD) continue;
        uintptr_t begin = info->dlpi_addr + segment->p_vaddr;
        if (low >= begin && high <= begin + segment->p_memsz) return 1;
    }
    return 0;
}

static uint64_t read_bytes(cursor *c, size_t count) {
    if (c->failed || (size_t)(c->end - c->at) < count) {
        c->failed = 1;
        return 0;
    }
    uint64_t value = 0;
    memcpy(&value, c->at, count); /* little-endian */
    c->at += count;
    return value;
}

static uint64_t read_uleb(cursor *c) {
    uint64_t value = 0;
    for (unsigned shift = 0; !c->failed; shift += 7) {
        uint8_t byte = (uint8_t)read_bytes(c, 1);
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) break;
    }
    return value;
}

static int64_t read_sleb(cursor *c) {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
        byte = (uint8_t)read_bytes(c, 1);
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while ((byte & 0x80) && !c->failed);
    if (shift < 64 && (byte & 0x40)) value |= ~(uint64_t)0 << shift;
    return (int64_t)value;
}

/* A pointer in DW_EH_PE encoding; `data_base` serves datarel (the .eh_frame_hdr). */
static uintptr_t read_encoded(cursor *c, uint8_t encoding, uintptr_t data_base) {
    uintptr_t field = (uintptr_t)c->at;
    uint64_t value;
    switch (encoding & 0x0f) {
    case 0x00: value = read_bytes(c, 8); break;
    case 0x01: value = read_uleb(c); break;
    case 0x02: value = read_bytes(c, 2); break;
    case 0x03: value = read_bytes(c, 4); break;
    case 0x04: value = read_bytes(c, 8); break;
    case 0x09: value = (uint64_t)read_sleb(c); break;
    case 0x0a: value = (uint64_t)(int64_t)(int16_t)read_bytes(c, 2); break;
    case 0x0b: value = (uint64_t)(int64_t)(int32_t)read_bytes(c, 4); break;
    case 0x0c: value = read_bytes(c, 8); break;
    default: c->failed = 1; return 0;
    }
    switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: value += field; break;
    case 0x30: value += data_base; break;
    default: c->failed = 1; return 0;
    }
    if (encoding & 0x80) c->failed = 1; /* indirect: not used for code addresses */
    return (uintptr_t)value;
}

/* The length field of a CIE or FDE at `at`: the extent of its body. */
static int entry_extent(const struct dl_phdr_info *module, const uint8_t *at, cursor *body) {
    if (!readable(module, at, 4)) return 0;
    uint32_t length32;
    memcpy(&length32, at, 4);
    const uint8_t *start = at + 4;
    uint64_t length = length32;
    if (length32 == 0xffffffffu) {
        if (!readable(module, at, 12)) return 0;
        memcpy(&length, at + 4, 8);
        start = at + 12;
    }
    if (length == 0 || !readable(module, start, (size_t)length)) return 0;
    *body = (cursor){start, start + length, 0};
    return 1;
}

static int parse_cie(const struct dl_phdr_info *module, const uint8_t *at, cie_info *cie) {
    cursor c;
    if (!entry_extent(module, at, &c)) return 0;
    int wide = c.at - at == 12;
    if (read_bytes(&c, wide ? 8 : 4) != 0) return 0; /* a CIE's id is 0 in .eh_frame */
    uint8_t version = (uint8_t)read_bytes(&c, 1);
    const char *augmentation = (const char *)c.at;
    size_t augmentation_length = strnlen(augmentation, (size_t)(c.end - c.at));
    c.at += augmentation_length + 1;
    if (c.at > c.end) return 0;
    *cie = (cie_info){.fde_encoding = 0};
    if (augmentation[0] == 'e' && augmentation[1] == 'h') read_bytes(&c, 8);
    cie->code_align = read_uleb(&c);
    cie->data_align = read_sleb(&c);
    if (version == 1) read_bytes(&c, 1); else read_uleb(&c); /* return address column: 16 on x86-64 */
    const uint8_t *augmentation_end = NULL;
    if (augmentation[0] == 'z') {
        uint64_t length = read_uleb(&c);
        if (c.failed || length > (uint64_t)(c.end - c.at)) return 0;
        augmentation_end = c.at + length;
        cie->has_augmentation_data = 1;
    }
    for (const char *letter = augmentation + (augmentation[0] == 'z'); *letter && !c.failed; letter++) {
        switch (*letter) {
        case 'R': cie->fde_encoding = (uint8_t)read_bytes(&c, 1); break;
        case 'L': read_bytes(&c, 1); break;
        case 'P': read_encoded(&c, (uint8_t)read_bytes(&c, 1) & 0x7f, 0); break;
        case 'S': cie->signal_frame = 1; break;
        default:
            if (!augmentation_end) return 0; /* unknown data of unknown size */
            c.at = augmentation_end;
            letter = augmentation + augmentation_length - 1;
            break;
        }
    }
    if (augmentation_end) c.at = augmentation_end;
    if (c.failed) return 0;
    cie->instructions = c.at;
    cie->instructions_end = c.end;
    return 1;
}

static int grow(table_builder *builder) {
    size_t capacity = builder->capacity ? builder->capacity * 2 : 1024;
    size_t old_bytes = sizeof(ss_unwind_table) + builder->capacity * sizeof(ss_unwind_row);
    size_t bytes = sizeof(ss_unwind_table) + capacity * sizeof(ss_unwind_row);
    void *memory = builder->table
        ? mremap(builder->table, old_bytes, bytes, MREMAP_MAYMOVE)
        : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return 0;
    builder->table = memory;
    builder->table->mapped_bytes = bytes;
    builder->capacity = capacity;
    return 1;
}

/* Appends a row for the range starting at module address `pc`, keeping rows sorted:
 * a row at the same address replaces the last one (an FDE starting where the previous
 * ended), and a later FDE that overlaps earlier rows wins over them. */
static void append_row(table_builder *builder, uintptr_t pc, ss_unwind_row row) {
    if (builder->failed || pc < builder->bias || pc - builder->bias > UINT32_MAX) return;
    row.pc = (uint32_t)(pc - builder->bias);
    ss_unwind_table *table = builder->table;
    size_t count = table ? table->count : 0;
    while (count > 0 && table->rows[count - 1].pc >= row.pc) count--;
    if (count > 0) {
        const ss_unwind_row *last = &table->rows[count - 1];
        if (last->kind == row.kind && last->cfa_offset == row.cfa_offset && last->rbp_slot == row.rbp_slot &&
            last->rbx_slot == row.rbx_slot && last->r14_slot == row.r14_slot) {
            table->count = count; /* the same rule continues */
            return;
        }
    }
    if (count == builder->capacity) {
        if (!grow(builder)) {
            builder->failed = 1;
            return;
        }
        table = builder->table;
    }
    table->rows[count] = row;
    table->count = count + 1;
}

/* A register's rule as a row's slot: unchanged, a save at CFA + 8 * slot, or unknown. */
static int8_t slot_of(register_rule rule, int64_t offset) {
    if (rule == RULE_SAME) return SS_SLOT_UNCHANGED;
    if (rule == RULE_OFFSET && offset < 0 && offset % 8 == 0 && offset / 8 > SS_SLOT_UNKNOWN) return (int8_t)(offset / 8);
    return SS_SLOT_UNKNOWN;
}

static ss_unwind_row row_from_state(const cfi_state *state, int signal_frame) {
    ss_unwind_row row = {.kind = SS_ROW_UNKNOWN, .rbp_slot = SS_SLOT_UNKNOWN, .rbx_slot = SS_SLOT_UNKNOWN,
                         .r14_slot = SS_SLOT_UNKNOWN};
    if (state->ra_rule == RULE_UNDEFINED) { row.kind = SS_ROW_OUTERMOST; return row; }
    if (signal_frame) { row.kind = SS_ROW_SIGNAL; return row; }
    if (state->ra_rule != RULE_OFFSET || state->ra_offset != -8) return row;
    if (state->cfa_offset < INT32_MIN || state->cfa_offset > INT32_MAX) return row;
    if (state->cfa_register == REG_NUMBER_RSP) row.kind = SS_ROW_CFA_RSP;
    else if (state->cfa_register == REG_NUMBER_RBP) row.kind = SS_ROW_CFA_RBP;
    else if (state->cfa_register == REG_NUMBER_RBX) row.kind = SS_ROW_CFA_RBX;
    else if (state->cfa_register == -1 && state->cfa_expression == SS_ROW_PLT) row.kind = SS_ROW_PLT;
    else return row;
    row.cfa_offset = (int32_t)(row.kind == SS_ROW_PLT ? state->plt_threshold : state->cfa_offset);
    row.rbp_slot = slot_of(state->rbp_rule, state->rbp_offset);
    row.rbx_slot = slot_of(state->rbx_rule, state->rbx_offset);
    row.r14_slot = slot_of(state->r14_rule, state->r14_offset);
    return row;
}

/* The CFA expression every PLT entry of GNU ld uses: rsp + 8, plus 8 once pc & 15
 * reaches 11 (or 10), where the entry has pushed its argument. */
static int plt_expression(const uint8_t *bytes, size_t length, int64_t *threshold) {
    static const uint8_t before[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
    static const uint8_t after[] = {0x2a, 0x33, 0x24, 0x22};
    if (length != 11 || memcmp(bytes, before, sizeof before) != 0 || memcmp(bytes + 7, after, sizeof after) != 0) return 0;
    if (bytes[6] < 0x30 || bytes[6] > 0x4f) return 0; /* DW_OP_lit0..31 */
    *threshold = bytes[6] - 0x30;
    return 1;
}

static void set_rule(cfi_state *state, uint64_t reg, register_rule rule, int64_t offset) {
    if (reg == REG_NUMBER_RBP) { state->rbp_rule = rule; state->rbp_offset = offset; }
    else if (reg == REG_NUMBER_RBX) { state->rbx_rule = rule; state->rbx_offset = offset; }
    else if (reg == REG_NUMBER_RA) { state->ra_rule = rule; state->ra_offset = offset; }
    else if (reg == REG_NUMBER_R14) { state->r14_rule = rule; state->r14_offset = offset; }
}

/* DW_CFA_restore: register `reg` gets its rule from the CIE's instructions back. */
static void restore_rule(cfi_state *state, const cfi_state *initial, uint64_t reg) {
    if (reg == REG_NUMBER_RBP) set_rule(state, reg, initial->rbp_rule, initial->rbp_offset);
    else if (reg == REG_NUMBER_RBX) set_rule(state, reg, initial->rbx_rule, initial->rbx_offset);
    else if (reg == REG_NUMBER_RA) set_rule(state, reg, initial->ra_rule, initial->ra_offset);
    else if (reg == REG_NUMBER_R14) set_rule(state, reg, initial->r14_rule, initial->r14_offset);
}

/* Runs CFI instructions. With `builder`, rows are emitted as the location advances;
 * `initial` is the state after the CIE's instructions (for DW_CFA_restore). */
static int run_cfi(cursor c, const cie_info *cie, cfi_state *state, const cfi_state *initial,
                   table_builder *builder, uintptr_t *location) {
    cfi_state saved[STATE_STACK_DEPTH];
    int saved_count = 0;
    while (c.at < c.end && !c.failed) {
        uint8_t op = (uint8_t)read_bytes(&c, 1);
        uint64_t reg, delta = 0;
        int advance = 0;
        switch (op >> 6) {
        case 1: delta = op & 0x3f; advance = 1; break;
        case 2: set_rule(state, op & 0x3f, RULE_OFFSET, (int64_t)read_uleb(&c) * cie->data_align); continue;
        case 3: restore_rule(state, initial, op & 0x3f); continue;
        default: break;
        }
        if (!advance) {
            switch (op) {
            case 0x00: break;                                          /* nop */
            case 0x01: return 0;                                       /* set_loc: not produced for .eh_frame here */
            case 0x02: delta = read_bytes(&c, 1); advance = 1; break;   /* advance_loc1 */
            case 0x03: delta = read_bytes(&c, 2); advance = 1; break;   /* advance_loc2 */
            case 0x04: delta = read_bytes(&c, 4); advance = 1; break;   /* advance_loc4 */
            case 0x05: reg = read_uleb(&c); set_rule(state, reg, RULE_OFFSET, (int64_t)read_uleb(&c) * cie->data_align); break;
            case 0x06: case 0x0d: /* restore_extended, def_cfa_register */
                reg = read_uleb(&c);
                if (op == 0x0d) state->cfa_register = (int)reg;
                else restore_rule(state, initial, reg);
                break;
            case 0x07: set_rule(state, read_uleb(&c), RULE_UNDEFINED, 0); break;
            case 0x08: set_rule(state, read_uleb(&c), RULE_SAME, 0); break;
            case 0x09: reg = read_uleb(&c); read_uleb(&c); set_rule(state, reg, RULE_OTHER, 0); break; /* register */
            case 0x0a: /* remember_state */
                if (saved_count == STATE_STACK_DEPTH) return 0;
                saved[saved_count++] = *state;
                break;
            case 0x0b: /* restore_state */
                if (saved_count == 0) return 0;
                *state = saved[--saved_count];
                break;
            case 0x0c: state->cfa_register = (int)read_uleb(&c); state->cfa_offset = (int64_t)read_uleb(&c); break;
            case 0x0e: state->cfa_offset = (int64_t)read_uleb(&c); break;
            case 0x0f: { /* def_cfa_expression */
                uint64_t length = read_uleb(&c);
                if (c.failed || length > (uint64_t)(c.end - c.at)) return 0;
                state->cfa_register = -1;
                state->cfa_expression = plt_expression(c.at, (size_t)length, &state->plt_threshold) ? SS_ROW_PLT : SS_ROW_UNKNOWN;
                c.at += length;
                break;
            }
            case 0x10: case 0x16: { /* expression, val_expression */
                reg = read_uleb(&c);
                uint64_t length = read_uleb(&c);
                if (c.failed || length > (uint64_t)(c.end - c.at)) return 0;
                c.at += length;
                set_rule(state, reg, RULE_OTHER, 0);
                break;
            }
            case 0x11: reg = read_uleb(&c); set_rule(state, reg, RULE_OFFSET, read_sleb(&c) * cie->data_align); break;
            case 0x12: state->cfa_register = (int)read_uleb(&c); state->cfa_offset = read_sleb(&c) * cie->data_align; break;
            case 0x13: state->cfa_offset = read_sleb(&c) * cie->data_align; break;
            case 0x14: case 0x15: /* val_offset(_sf): a value, not a save slot */
                reg = read_uleb(&c);
                if (op == 0x14) read_uleb(&c); else read_sleb(&c);
                set_rule(state, reg, RULE_OTHER, 0);
                break;
            case 0x2e: read_uleb(&c); break; /* GNU_args_size */
            case 0x2f: reg = read_uleb(&c); set_rule(state, reg, RULE_OFFSET, -(int64_t)read_uleb(&c) * cie->data_align); break;
            default: return 0;
            }
        }
        if (advance && builder) {
            append_row(builder, *location, row_from_state(state, cie->signal_frame));
            *location += delta * cie->code_align;
        }
    }
    return !c.failed;
}

/* Compiles one FDE (at `fde`, listed in .eh_frame_hdr) into rows. */
static void add_fde(table_builder *builder, const struct dl_phdr_info *module, const uint8_t *fde) {
    cursor c;
    if (!entry_extent(module, fde, &c)) return;
    const uint8_t *id_field = c.at;
    uint32_t cie_pointer = (uint32_t)read_bytes(&c, 4);
    if (c.failed || cie_pointer == 0) return;
    const uint8_t *cie_at = id_field - cie_pointer;
    if (cie_at != builder->cie_at) {
        builder->cie_at = NULL;
        if (!parse_cie(module, cie_at, &builder->cie)) return;
        builder->cie_at = cie_at;
    }
    const cie_info cie = builder->cie;
    uintptr_t start = read_encoded(&c, cie.fde_encoding, 0);
    uintptr_t range = read_encoded(&c, cie.fde_encoding & 0x0f, 0);
    if (cie.has_augmentation_data) {
        uint64_t length = read_uleb(&c);
        if (c.failed || length > (uint64_t)(c.end - c.at)) return;
        c.at += length;
    }
    if (c.failed || range == 0) return;
    cfi_state initial = {.cfa_register = REG_NUMBER_RSP, .rbp_rule = RULE_SAME, .rbx_rule = RULE_SAME, .ra_rule = RULE_SAME,
                         .r14_rule = RULE_SAME};
    uintptr_t location = start;
    if (!run_cfi((cursor){cie.instructions, cie.instructions_end, 0}, &cie, &initial, &initial, NULL, &location)) return;
    cfi_state state = initial;
    if (!run_cfi(c, &cie, &state, &initial, builder, &location)) {
        /* A program that cannot be followed: its whole range says so (the row at `start`
         * replaces every row of it). */
        append_row(builder, start, (ss_unwind_row){.kind = SS_ROW_UNKNOWN, .rbp_slot = SS_SLOT_UNKNOWN,
                                                   .rbx_slot = SS_SLOT_UNKNOWN, .r14_slot = SS_SLOT_UNKNOWN});
    } else {
        append_row(builder, location, row_from_state(&state, cie.signal_frame));
    }
    append_row(builder, start + range,
               (ss_unwind_row){.kind = SS_ROW_NONE, .rbp_slot = SS_SLOT_UNKNOWN, .rbx_slot = SS_SLOT_UNKNOWN, .r14_slot = SS_SLOT_UNKNOWN});
}

enum { PAGE_SHIFT = 12 };

/* Appends the page index after the rows (see ss_unwind_table). */
static int add_page_index(table_builder *builder) {
    ss_unwind_table *table = builder->table;
    uint32_t first_page = table->rows[0].pc >> PAGE_SHIFT;
    uint32_t page_count = (table->rows[table->count - 1].pc >> PAGE_SHIFT) - first_page + 2;
    size_t rows_bytes = sizeof(ss_unwind_table) + table->count * sizeof(ss_unwind_row);
    size_t bytes = rows_bytes + page_count * sizeof(uint32_t);
    void *memory = mremap(table, table->mapped_bytes, bytes, MREMAP_MAYMOVE);
    if (memory == MAP_FAILED) return 0;
    builder->table = table = memory;
    table->mapped_bytes = bytes;
    uint32_t *page_first = (uint32_t *)((unsigned char *)table + rows_bytes);
    size_t row = 0;
    for (uint32_t page = 0; page < page_count; page++) {
        while (row < table->count && (table->rows[row].pc >> PAGE_SHIFT) < first_page + page) row++;
        page_first[page] = (uint32_t)row;
    }
    table->page_first = page_first;
    table->first_page = first_page;
    table->page_count = page_count;
    return 1;
}

/* How many FDEs are compiled between two looks at `cancelled`. */
enum { FDES_BETWEEN_CANCEL_CHECKS = 256 };

ss_unwind_table *ss_unwind_table_build(const struct dl_phdr_info *info, int (*cancelled)(void), int *was_cancelled) {
    *was_cancelled = 0;
    const ElfW(Phdr) *header_segment = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) header_segment = &info->dlpi_phdr[i];
    if (!header_segment) return NULL;
    const uint8_t *header = (const uint8_t *)(info->dlpi_addr + header_segment->p_vaddr);
    if (!readable(info, header, header_segment->p_memsz) || header_segment->p_memsz < 4 || header[0] != 1) return NULL;
    uint8_t frame_encoding = header[1], count_encoding = header[2], table_encoding = header[3];
    if (count_encoding == PE_OMIT || table_encoding == PE_OMIT) return NULL;
    cursor c = {header + 4, header + header_segment->p_memsz, 0};
    read_encoded(&c, frame_encoding, (uintptr_t)header);
    uintptr_t count = read_encoded(&c, count_encoding, (uintptr_t)header);
    table_builder builder = {.bias = info->dlpi_addr};
    for (uintptr_t i = 0; i < count && !c.failed && !builder.failed; i++) {
        if (cancelled && i % FDES_BETWEEN_CANCEL_CHECKS == 0 && cancelled()) {
            *was_cancelled = 1;
            ss_unwind_table_free(builder.table);
            return NULL;
        }
        read_encoded(&c, table_encoding, (uintptr_t)header); /* initial location */
        uintptr_t fde = read_encoded(&c, table_encoding, (uintptr_t)header);
        if (!c.failed) add_fde(&builder, info, (const uint8_t *)fde);
    }
    if (builder.failed) {
        ss_unwind_table_free(builder.table);
        return NULL;
    }
    if (builder.table && !add_page_index(&builder)) {
        ss_unwind_table_free(builder.table);
        return NULL;
    }
    if (builder.table) builder.table->bias = info->dlpi_addr;
    return builder.table;
}

void ss_unwind_table_free(ss_unwind_table *table) {
    if (table) munmap(table, table->mapped_bytes);
}

const ss_unwind_row *ss_unwind_table_find(const ss_unwind_table *table, uintptr_t pc) {
    if (pc < table->bias || pc - table->bias > UINT32_MAX) return NULL;
    uint32_t offset = (uint32_t)(pc - table->bias);
    if (offset < table->rows[0].pc) return NULL;
    uint32_t page = (offset >> PAGE_SHIFT) - table->first_page;
    if (page >= table->page_count - 1) return &table->rows[table->count - 1];
    /* The row is among this page's, or the last one before them. */
    size_t low = table->page_first[page], high = table->page_first[page + 1]; /* first row past offset */
    while (low < high) {
        size_t middle = (low + high) / 2;
        if (table->rows[middle].pc <= offset) low = middle + 1; else high = middle;
    }
    return &table->rows[low - 1];
}
