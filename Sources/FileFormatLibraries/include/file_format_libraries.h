/*
 * libelf, libdw, liblzma and zlib, loaded privately (dlopen RTLD_LOCAL) the first time a run
 * needs them, and called through these tables. Linked as dependencies, they (and libstdc++,
 * libbz2 through libdw) would be loaded into every profiled process at start, and their symbols
 * would join the program's global scope. Each table's members have the names and types of the
 * library's own functions. A loader returns NULL when its library cannot be loaded.
 */
#ifndef STACKSAMPLER_FILE_FORMAT_LIBRARIES_H
#define STACKSAMPLER_FILE_FORMAT_LIBRARIES_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <zlib.h>

#include "private_library.h"

#define SS_LIBELF_FUNCTIONS(F) \
    F(elf_version) F(elf_begin) F(elf_memory) F(elf_end) F(elf_kind) F(elf_getphdrnum) F(elf_nextscn) \
    F(elf_getshdrstrndx) F(elf_strptr) F(elf_getdata) F(elf_getdata_rawchunk) F(elf_ndxscn) F(gelf_getclass) \
    F(gelf_getehdr) F(gelf_getphdr) F(gelf_getshdr) F(gelf_getsym) F(gelf_getrela) F(gelf_getnote)

#define SS_LIBDW_FUNCTIONS(F) \
    F(dwarf_begin_elf) F(dwarf_end) F(dwarf_addrdie) F(dwarf_getscopes) F(dwarf_getscopes_die) \
    F(dwarf_getsrcfiles) F(dwarf_tag) F(dwarf_getsrc_die) F(dwarf_linesrc) F(dwarf_lineno) F(dwarf_attr) \
    F(dwarf_formudata) F(dwarf_filesrc) F(dwarf_attr_integrate) F(dwarf_formstring)

#define SS_LIBLZMA_FUNCTIONS(F) F(lzma_stream_decoder) F(lzma_code) F(lzma_end) F(lzma_crc32)

#define SS_ZLIB_FUNCTIONS(F) F(deflateInit2_) F(deflate) F(deflateEnd)

/** libelf.so.1's functions used by the symbolizer. */
typedef struct { SS_LIBELF_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_libelf;
/** libdw.so.1's functions used for source lines and inlined calls. */
typedef struct { SS_LIBDW_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_libdw;
/** liblzma.so.5's functions used for MiniDebugInfo and debug-link CRCs. */
typedef struct { SS_LIBLZMA_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_liblzma;
/** libz.so.1's functions used for gzip-compressed pprof files. */
typedef struct { SS_ZLIB_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_zlib;

/** Each loads its library on the first call (later calls return the same answer); NULL if the
 *  library or one of its functions is missing. Safe from any thread. Not exported: each image
 *  that links the symbolizer keeps its own. */
#define SS_LOADER __attribute__((visibility("hidden")))
SS_LOADER const ss_libelf *_Nullable ss_libelf_load(void);
SS_LOADER const ss_libdw *_Nullable ss_libdw_load(void);
SS_LOADER const ss_liblzma *_Nullable ss_liblzma_load(void);
SS_LOADER const ss_zlib *_Nullable ss_zlib_load(void);

#endif
