/* The file-format libraries, each loaded privately once (file_format_libraries.h, private_library.h). */
#include "file_format_libraries.h"

#include "private_library.h"

static ss_libelf libelf_table;
static ss_libdw libdw_table;
static ss_liblzma liblzma_table;
static ss_zlib zlib_table;

static ss_private_library libelf = SS_PRIVATE_LIBRARY("libelf.so.1", "libelf1", SS_LIBELF_FUNCTIONS, libelf_table, NULL);
static ss_private_library libdw = SS_PRIVATE_LIBRARY("libdw.so.1", "libdw1", SS_LIBDW_FUNCTIONS, libdw_table, NULL);
static ss_private_library liblzma = SS_PRIVATE_LIBRARY("liblzma.so.5", "liblzma5", SS_LIBLZMA_FUNCTIONS, liblzma_table,
                                                       NULL);
static ss_private_library zlib = SS_PRIVATE_LIBRARY("libz.so.1", "zlib1g", SS_ZLIB_FUNCTIONS, zlib_table, NULL);

const ss_libelf *ss_libelf_load(void) { return ss_private_library_load(&libelf); }
const ss_libdw *ss_libdw_load(void) { return ss_private_library_load(&libdw); }
const ss_liblzma *ss_liblzma_load(void) { return ss_private_library_load(&liblzma); }
const ss_zlib *ss_zlib_load(void) { return ss_private_library_load(&zlib); }
