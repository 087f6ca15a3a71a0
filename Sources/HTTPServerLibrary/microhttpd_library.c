/* libmicrohttpd, loaded privately once (microhttpd_library.h, private_library.h). */
#include "microhttpd_library.h"

#include "private_library.h"

static ss_libmicrohttpd table;
static ss_private_library libmicrohttpd =
    SS_PRIVATE_LIBRARY("libmicrohttpd.so.12", "libmicrohttpd12", SS_LIBMICROHTTPD_FUNCTIONS, table, NULL);

const ss_libmicrohttpd *ss_libmicrohttpd_load(void) { return ss_private_library_load(&libmicrohttpd); }
