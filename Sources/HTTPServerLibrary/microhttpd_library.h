/*
 * libmicrohttpd, loaded privately (dlopen RTLD_NOW | RTLD_LOCAL) the first time a listener is
 * asked for, and called through this table. Linked as a dependency it (and gnutls, p11-kit,
 * nettle, gmp… through it) would be loaded into every profiled process at start, and its
 * symbols would join the program's global scope. Each member has the name and type of the
 * library's own function.
 */
#ifndef STACKSAMPLER_MICROHTTPD_LIBRARY_H
#define STACKSAMPLER_MICROHTTPD_LIBRARY_H

#include <microhttpd.h>

#include "private_library.h"

#define SS_LIBMICROHTTPD_FUNCTIONS(F) \
    F(MHD_start_daemon) F(MHD_stop_daemon) F(MHD_run) F(MHD_get_timeout) F(MHD_get_daemon_info) \
    F(MHD_get_connection_values_n) F(MHD_lookup_connection_value) F(MHD_create_response_from_buffer) \
    F(MHD_add_response_header) F(MHD_queue_response) F(MHD_destroy_response) F(MHD_suspend_connection) \
    F(MHD_resume_connection)

/** libmicrohttpd.so.12's functions used by the HTTP server. */
typedef struct { SS_LIBMICROHTTPD_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_libmicrohttpd;

/** Loads libmicrohttpd on the first call (later calls return the same answer); NULL if the
 *  library or one of its functions is missing. Safe from any thread. */
__attribute__((visibility("hidden"))) const ss_libmicrohttpd *_Nullable ss_libmicrohttpd_load(void);

#endif
