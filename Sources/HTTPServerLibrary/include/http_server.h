/*
 * A small HTTP server over libmicrohttpd for the daemon's pull endpoints. libmicrohttpd (and the
 * gnutls it links) is loaded privately (dlopen RTLD_LOCAL) by ss_http_server_create, so a
 * process that does not listen never loads it and its symbols never join the program's scope.
 *
 * The server runs no thread of its own: the caller runs ss_http_server_run on a thread it made
 * (the profiler's unsampled threads), which polls every listener and calls the handler for each
 * request. A handler answers at once with ss_http_request_respond, or defers the request
 * (ss_http_request_defer) and answers it later from any thread; meanwhile the loop goes on
 * serving other requests.
 */
#ifndef STACKSAMPLER_HTTP_SERVER_H
#define STACKSAMPLER_HTTP_SERVER_H

#include <stddef.h>

/** A running server: one libmicrohttpd daemon per listening socket, one event loop. */
typedef struct ss_http_server ss_http_server;
/** One request, valid from the handler's call until it is answered (a deferred one: until
 *  ss_http_request_respond returns). */
typedef struct ss_http_request ss_http_request;

/** Called on the loop's thread for every request whose headers have arrived. */
typedef void (*ss_http_handler)(void *_Nullable context, ss_http_request *_Nonnull request);

/** Called for each query argument, percent-decoded; `value` is NULL for `?name` without `=`. */
typedef void (*ss_http_argument_visitor)(void *_Nullable context, const char *_Nonnull name, size_t name_length,
                                         const char *_Nullable value, size_t value_length);

/** Bounds on what clients may send and hold. */
typedef struct {
    /** Connections open at once, per listener; more are refused. */
    unsigned connection_limit;
    /** Seconds a connection may stay idle (a slow client) before it is closed. */
    unsigned connection_timeout_seconds;
    /** Bytes of memory per connection, which bounds the request line and headers. */
    size_t connection_memory_limit;
} ss_http_limits;

/** Starts serving the listening sockets `fds` (the server owns them from now on, and closes
 *  them even on failure). Returns NULL with a message in `error` if libmicrohttpd cannot be
 *  loaded or a daemon cannot start. Requests are handled once ss_http_server_run runs. */
ss_http_server *_Nullable ss_http_server_create(const int *_Nonnull fds, size_t count, ss_http_limits limits,
                                                ss_http_handler _Nonnull handler, void *_Nullable context,
                                                char *_Nonnull error, size_t error_capacity);

/** Serves requests until ss_http_server_stop; then answers deferred requests still open with 503,
 *  stops the daemons (closing the listening sockets) and returns 0. Returns 1 at once if the
 *  server loses its descriptors (the program closed or reused the wake pipe's, a listener's or an
 *  epoll's number): it never touches them again, nor serves. */
int ss_http_server_run(ss_http_server *_Nonnull server);

/** Nonzero once the server has lost its descriptors (see ss_http_server_run). Any thread. */
int ss_http_server_lost(ss_http_server *_Nonnull server);

/** Makes ss_http_server_run return soon. Any thread; once. */
void ss_http_server_stop(ss_http_server *_Nonnull server);

/** Drops the caller's hold on a server whose run has returned; it is freed once no deferred
 *  request holds it either. */
void ss_http_server_release(ss_http_server *_Nonnull server);

/** The request's method as sent (`GET`). */
const char *_Nonnull ss_http_request_method(const ss_http_request *_Nonnull request);
/** The request's path, percent-decoded, without the query (`/debug/pprof/profile`). */
const char *_Nonnull ss_http_request_path(const ss_http_request *_Nonnull request);
/** Calls `visit` for each query argument, in order. */
void ss_http_request_arguments(const ss_http_request *_Nonnull request, ss_http_argument_visitor _Nonnull visit,
                               void *_Nullable context);
/** The value of request header `name` (case-insensitive), or NULL when absent. */
const char *_Nullable ss_http_request_header(const ss_http_request *_Nonnull request, const char *_Nonnull name);
/** Nonzero when the request announces a body (Content-Length above 0, or Transfer-Encoding). */
int ss_http_request_has_body(const ss_http_request *_Nonnull request);

/** Answers the request: `status`, `header_count` header lines given as name, value pairs in
 *  `headers`, and `body` (copied). For a HEAD request the body is not sent (its length is).
 *  On the handler's thread during its call, or from any thread once deferred. A deferred
 *  request already answered by the server's stop is left alone. Once only. */
void ss_http_request_respond(ss_http_request *_Nonnull request, unsigned status,
                             const char *_Nonnull const *_Nullable headers, size_t header_count,
                             const void *_Nullable body, size_t length);

/** Suspends the request during the handler's call, to be answered later by
 *  ss_http_request_respond from any thread; the loop serves other requests meanwhile.
 *  Returns 0, or -1 if it cannot be suspended (then answer it at once). */
int ss_http_request_defer(ss_http_request *_Nonnull request);

/** Marks work of the caller's for a deferred request (taking and rendering a profile) as under
 *  way, until ss_http_work_end. */
void ss_http_work_begin(void);
void ss_http_work_end(void);

/** Handler calls and deferred work under way in this process. In a forked child it is what was
 *  under way at the fork: nonzero means a thread that does not exist here was running the
 *  server's code (Swift's runtime, malloc'd state) and may have held a lock that stays held. */
int ss_http_work_under_way(void);

#endif
