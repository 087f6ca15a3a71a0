/*
 * libcurl, loaded privately (dlopen RTLD_LOCAL) the first time a request is made, and called
 * through a table. Linked as a dependency, libcurl (and OpenSSL, nghttp2, libssh2… through it)
 * would be loaded into every profiled process at start, and its symbols would join the program's
 * global scope, where they could take the place of the program's own copies. The table's members
 * have the names and types of libcurl's own functions.
 *
 * curl_easy_setopt is variadic, which Swift cannot call: ss_http_perform makes one whole request
 * in C, and Swift sees only it and the two plain structures below.
 */
#ifndef STACKSAMPLER_HTTP_CLIENT_LIBRARY_H
#define STACKSAMPLER_HTTP_CLIENT_LIBRARY_H

/* The members are called through pointers: curl.h's type-checking macros would take their place. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <stddef.h>

#include "private_library.h"

#define SS_LIBCURL_FUNCTIONS(F) \
    F(curl_global_init) F(curl_easy_init) F(curl_easy_setopt) F(curl_easy_perform) F(curl_easy_getinfo) \
    F(curl_easy_cleanup) F(curl_easy_strerror) F(curl_slist_append) F(curl_slist_free_all)

/** libcurl.so.4's functions used by the HTTP client. */
typedef struct { SS_LIBCURL_FUNCTIONS(SS_PRIVATE_LIBRARY_MEMBER) } ss_libcurl;

#define SS_HTTP_HIDDEN __attribute__((visibility("hidden")))

/** Loads libcurl.so.4 on the first call and initializes it (later calls return the same answer);
 *  NULL if the library or one of its functions is missing (ss_libcurl_load_error() says why).
 *  Safe from any thread. */
SS_HTTP_HIDDEN const ss_libcurl *_Nullable ss_libcurl_load(void);

/** Why ss_libcurl_load() returned NULL (the loader's message), or "" when it did not. */
SS_HTTP_HIDDEN const char *_Nonnull ss_libcurl_load_error(void);

/** One HTTP request. */
typedef struct {
    /** "GET" or "POST". */
    const char *_Nonnull method;
    /** http:// or https:// URL; with a unix socket its host part only fills the Host header. */
    const char *_Nonnull url;
    /** A unix socket to connect to instead of the URL's host and port; NULL for TCP. */
    const char *_Nullable unix_socket_path;
    /** Header lines, "Name: value". */
    const char *_Nonnull const *_Nullable headers;
    size_t header_count;
    /** The POST body (may be NULL when body_length is 0). */
    const void *_Nullable body;
    size_t body_length;
    /** Bounds on connecting and on the whole transfer, in ms (0: libcurl's defaults, none for the total). */
    long connect_timeout_ms;
    long total_timeout_ms;
    /** A response body longer than this ends the transfer with an error (0: no bound). */
    size_t max_response_bytes;
    /** When not NULL: set by ss_http_cancel() from another thread, it ends the transfer within
     *  about a second (libcurl's progress callback). */
    const int *_Nullable cancel;
} ss_http_request;

/** What came back. */
typedef struct {
    /** The HTTP status (0 when no response was received). */
    long status;
    /** The body, malloc'd (free with ss_http_response_free); NULL when empty. */
    unsigned char *_Nullable body;
    size_t body_length;
    /** Why the transfer failed, when ss_http_perform returned nonzero. */
    char error[CURL_ERROR_SIZE + 64];
} ss_http_response;

/** Makes the request and waits for the whole response. Returns 0 when a response was received
 *  (whatever its status), else nonzero with `response->error` saying why (libcurl missing,
 *  connection refused, timeout, response too large…). Never raises a signal (CURLOPT_NOSIGNAL),
 *  follows no redirects, speaks only http and https. Safe from any thread; one request per call. */
SS_HTTP_HIDDEN int ss_http_perform(const ss_http_request *_Nonnull request, ss_http_response *_Nonnull response);

/** Asks the transfers watching `flag` (ss_http_request.cancel) to end. */
SS_HTTP_HIDDEN void ss_http_cancel(int *_Nonnull flag);

/** Frees the body of a response filled by ss_http_perform. */
SS_HTTP_HIDDEN void ss_http_response_free(ss_http_response *_Nonnull response);

#endif
