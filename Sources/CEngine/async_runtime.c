/*
 * The Swift concurrency runtime, as the async chain needs it: where its job-running
 * function is (swift::runJobInEstablishedExecutorContext, in .symtab only, so read from
 * the file) and whether its context layout is the one async_stack.c was checked against:
 * the runtime's `_swift_concurrency_debug_internal_layout_version` (the version debuggers
 * and swift-inspect check) must be 1, as in Swift 6.3.1's runtime on x86-64 Linux.
 * Found when the module cache sees the library (the sampler thread, outside signal
 * context, under the loader's lock); read by the handler through two atomics.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CHECKED_LAYOUT_VERSION = 1 };

static const char job_runner_symbol[] = "_ZN5swift34runJobInEstablishedExecutorContextEPNS_3JobE";
static const char layout_version_symbol[] = "_swift_concurrency_debug_internal_layout_version";

static _Atomic int runtime_status = SS_ASYNC_RUNTIME_ABSENT;
static _Atomic int64_t runtime_layout_version = -1;
static _Atomic uintptr_t job_low, job_high;
static _Atomic uintptr_t noted_base;
static _Atomic int stacks_enabled = 1;

/* The two symbols' values and sizes from the file's .symtab; 0 when absent. */
typedef struct {
    ElfW(Addr) job_value, version_value;
    ElfW(Xword) job_size, version_size;
} runtime_symbols;

/* Whether [offset, offset + length) lies in a file of `size` bytes. */
static int in_file(size_t size, uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
}

static void find_symbols(const unsigned char *file, size_t size, runtime_symbols *found) {
    const ElfW(Ehdr) *header = (const ElfW(Ehdr) *)file;
    if (size < sizeof *header || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
        header->e_shentsize != sizeof(ElfW(Shdr)) || !in_file(size, header->e_shoff, (uint64_t)header->e_shnum * sizeof(ElfW(Shdr))))
        return;
    const ElfW(Shdr) *sections = (const ElfW(Shdr) *)(file + header->e_shoff);
    for (int i = 0; i < header->e_shnum; i++) {
        const ElfW(Shdr) *symtab = &sections[i];
        if (symtab->sh_type != SHT_SYMTAB || symtab->sh_link >= header->e_shnum) continue;
        const ElfW(Shdr) *strtab = &sections[symtab->sh_link];
        if (!in_file(size, symtab->sh_offset, symtab->sh_size) || !in_file(size, strtab->sh_offset, strtab->sh_size)) return;
        const ElfW(Sym) *symbols = (const ElfW(Sym) *)(file + symtab->sh_offset);
        const char *names = (const char *)(file + strtab->sh_offset);
        for (size_t s = 0; s < symtab->sh_size / sizeof(ElfW(Sym)); s++) {
            if (symbols[s].st_name >= strtab->sh_size) continue;
            const char *name = names + symbols[s].st_name;
            size_t room = strtab->sh_size - symbols[s].st_name;
            if (strncmp(name, job_runner_symbol, room) == 0 && strnlen(name, room) < room) {
                found->job_value = symbols[s].st_value;
                found->job_size = symbols[s].st_size;
            } else if (strncmp(name, layout_version_symbol, room) == 0 && strnlen(name, room) < room) {
                found->version_value = symbols[s].st_value;
                found->version_size = symbols[s].st_size;
            }
        }
        return;
    }
}

/* The layout version the loaded runtime declares (4 or 8 bytes in its data), -1 if none. */
static int64_t declared_layout_version(const struct dl_phdr_info *info, const runtime_symbols *found) {
    if (!found->version_value) return -1;
    const void *at = (const void *)(info->dlpi_addr + found->version_value);
    if (found->version_size == 4) { uint32_t value; memcpy(&value, at, 4); return value; }
    if (found->version_size == 8) { uint64_t value; memcpy(&value, at, 8); return (int64_t)value; }
    return -1;
}

void ss_async_runtime_note(const struct dl_phdr_info *info) {
    const char *name = info->dlpi_name;
    if (!name || !strstr(name, "/libswift_Concurrency.so")) return;
    if (atomic_load(&noted_base) == info->dlpi_addr) return;
    atomic_store(&noted_base, info->dlpi_addr);
    runtime_symbols found = {0, 0, 0, 0};
    int descriptor = open(name, O_RDONLY | O_CLOEXEC);
    struct stat status;
    if (descriptor >= 0 && fstat(descriptor, &status) == 0 && status.st_size > 0) {
        void *file = mmap(NULL, (size_t)status.st_size, PROT_READ, MAP_PRIVATE, descriptor, 0);
        if (file != MAP_FAILED) {
            find_symbols(file, (size_t)status.st_size, &found);
            munmap(file, (size_t)status.st_size);
        }
    }
    if (descriptor >= 0) close(descriptor);
    int64_t version = declared_layout_version(info, &found);
    atomic_store(&runtime_layout_version, version);
    if (version != CHECKED_LAYOUT_VERSION || !found.job_value || !found.job_size) {
        atomic_store(&runtime_status, SS_ASYNC_RUNTIME_UNSUPPORTED);
        return;
    }
    atomic_store(&job_low, info->dlpi_addr + found.job_value);
    atomic_store(&job_high, info->dlpi_addr + found.job_value + found.job_size);
    atomic_store(&runtime_status, SS_ASYNC_RUNTIME_SUPPORTED); /* after the range: the handler reads it first */
}

int ss_async_runtime_job_range(uintptr_t *low, uintptr_t *high) {
    if (!atomic_load_explicit(&stacks_enabled, memory_order_relaxed) ||
        atomic_load_explicit(&runtime_status, memory_order_acquire) != SS_ASYNC_RUNTIME_SUPPORTED)
        return 0;
    *low = atomic_load_explicit(&job_low, memory_order_relaxed);
    *high = atomic_load_explicit(&job_high, memory_order_relaxed);
    return 1;
}

int ss_async_runtime_status(int64_t *layout_version) {
    *layout_version = atomic_load(&runtime_layout_version);
    return atomic_load(&runtime_status);
}

void ss_async_stacks_enable(int enabled) { atomic_store(&stacks_enabled, enabled != 0); }
