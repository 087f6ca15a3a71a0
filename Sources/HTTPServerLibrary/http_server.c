/*
 * The HTTP server (http_server.h) over libmicrohttpd, driven by one event loop on the caller's
 * thread.
 *
 * Threading model: libmicrohttpd runs no thread (no MHD_USE_INTERNAL_POLLING_THREAD): every
 * daemon is MHD_USE_EPOLL with MHD_ALLOW_SUSPEND_RESUME, and ss_http_server_run polls their epoll
 * descriptors and a wake pipe, then lets each daemon work (MHD_run). So every thread of the
 * server is one the profiler made (unsampled, signals blocked), none a thread libmicrohttpd
 * made with the program's pthread_create, which would be sampled as the program's. A request
 * that takes long (a profile of N seconds) is deferred: its connection is suspended, a thread of
 * the caller's takes the profile, then answers and resumes it; the loop meanwhile answers every
 * other request at once (404, 405, 429, status). epoll, unlike select, has no FD_SETSIZE limit on
 * the descriptor numbers of a service with thousands of files open.
 *
 * Descriptors: the wake pipe, the listening sockets and libmicrohttpd's epoll descriptors are
 * the program's numbers too (a daemon closes every descriptor and makes new ones). Each is
 * checked to be the same file as when the server made it (device and inode) before every use;
 * once one is not, the server has lost them: it never reads, writes, polls or closes any of them
 * again (nor lets libmicrohttpd, which would close them and abort the process when a close
 * fails), and its loop returns at once, saying so (no spinning on a closed number). A forked
 * child closes its inherited copies of a parent's server's descriptors (pthread_atfork), so that
 * no process holds a listening address it does not answer.
 */
#define _GNU_SOURCE
#include "http_server.h"
#include "microhttpd_library.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/** Listeners one server serves at most (TCP, unix:PATH, the default socket: three). */
#define SS_HTTP_MAX_LISTENERS 8
/** Descriptors one server checks: the wake pipe's two, a listener and an epoll per listener. */
/* The wake pipe's two ends come first among the server's own descriptors. */
#define SS_HTTP_WAKE_ENDS 2
#define SS_HTTP_MAX_OWNED (SS_HTTP_WAKE_ENDS + 2 * SS_HTTP_MAX_LISTENERS)
/** Servers a process has at once (a daemon's one; a few in tests). */
#define SS_HTTP_MAX_SERVERS 8
/** The longest wait of the loop without looking at its daemons, in ms. */
#define SS_HTTP_MAX_WAIT_MS 1000
/** How long a stopping server keeps serving the 503s it gave deferred requests, in ms. */
#define SS_HTTP_DRAIN_MS 200

/* A descriptor the server made, and the file it was then. */
typedef struct {
    int fd;
    dev_t device;
    ino_t inode;
} owned_fd;

struct ss_http_server {
    const ss_libmicrohttpd *mhd;
    /* The process that made the server; in any other (a forked child) it is never used. */
    pid_t owner;
    /* wake[0], wake[1], then each listener and each daemon's epoll descriptor. */
    owned_fd owned[SS_HTTP_MAX_OWNED];
    /* Atomic: the stopping thread's wake reads it while the server thread lets its daemons go. */
    _Atomic size_t owned_count;
    /* Set once a descriptor is found not to be the server's (or in a forked child): from then on
     * none is used or closed by the server, and ss_http_server_run returns. */
    atomic_int lost;
    struct MHD_Daemon *daemons[SS_HTTP_MAX_LISTENERS];
    size_t count;
    /* Written by ss_http_server_stop to wake the loop. */
    int wake[2];
    atomic_int stopping;
    ss_http_handler handler;
    void *context;
    pthread_mutex_t lock;
    /* Under lock: the owner's hold plus one per deferred request not yet answered by its caller. */
    unsigned holds;
    /* Under lock: deferred requests not answered yet. */
    ss_http_request *deferred;
};

enum request_state {
    REQUEST_NEW,      /* in the handler's call, not answered */
    REQUEST_ANSWERED, /* a response is queued */
    REQUEST_DEFERRED, /* suspended, waiting for its answer */
    REQUEST_READY,    /* answered while suspended: `ready` waits to be queued by the loop */
};

struct ss_http_request {
    ss_http_server *server;
    struct MHD_Connection *connection;
    const char *method;
    const char *path;
    /* Under the server's lock once deferred. */
    enum request_state state;
    struct MHD_Response *ready;
    unsigned ready_status;
    /* Under the server's lock: libmicrohttpd's hold (until the request completes) and the
     * deferring caller's (until it answers). */
    unsigned holds;
    ss_http_request *next;
};

static void wake_loop(ss_http_server *server);

static void release_server_locked(ss_http_server *server, int *free_it) {
    *free_it = --server->holds == 0;
}

static _Atomic(ss_http_server *) registry[SS_HTTP_MAX_SERVERS];
/* Handler calls and deferred answers under way, in every server of the process (see
 * ss_http_work_under_way). */
static atomic_int work_under_way;

static int same_file(const owned_fd *owned) {
    struct stat info;
    return fstat(owned->fd, &info) == 0 && info.st_dev == owned->device && info.st_ino == owned->inode;
}

/* Remembers `fd` as the server's, with the file it is now. */
static void own(ss_http_server *server, int fd) {
    struct stat info;
    if (fd < 0 || server->owned_count == SS_HTTP_MAX_OWNED || fstat(fd, &info) != 0) return;
    server->owned[server->owned_count++] = (owned_fd){fd, info.st_dev, info.st_ino};
}

/* Whether every descriptor is still the server's; the first time one is not, the server is lost
 * for good. */
static int still_owned(ss_http_server *server) {
    if (atomic_load(&server->lost)) return 0;
    for (size_t i = 0; i < server->owned_count; i++) {
        if (same_file(&server->owned[i])) continue;
        atomic_store(&server->lost, 1);
        return 0;
    }
    return 1;
}

/* Closes the server's descriptors that are still its own; forgets them all. */
static void close_owned(ss_http_server *server) {
    for (size_t i = 0; i < server->owned_count; i++)
        if (same_file(&server->owned[i])) close(server->owned[i].fd);
    server->owned_count = 0;
}

/* In a forked child: a parent's server is never served here, and its descriptors are closed,
 * so that the child holds no listening address it does not answer. Only close and fstat
 * (async-signal-safe) and plain stores. */
static void forget_in_forked_child(void) {
    pid_t self = getpid();
    for (size_t i = 0; i < SS_HTTP_MAX_SERVERS; i++) {
        ss_http_server *server = atomic_load(&registry[i]);
        if (!server || server->owner == self) continue;
        atomic_store(&server->lost, 1);
        close_owned(server);
        atomic_store(&registry[i], NULL);
    }
}

static void install_fork_handler(void) { pthread_atfork(NULL, NULL, forget_in_forked_child); }

static void register_server(ss_http_server *server) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fork_handler);
    for (size_t i = 0; i < SS_HTTP_MAX_SERVERS; i++) {
        ss_http_server *empty = NULL;
        if (atomic_compare_exchange_strong(&registry[i], &empty, server)) return;
    }
}

static void unregister_server(ss_http_server *server) {
    for (size_t i = 0; i < SS_HTTP_MAX_SERVERS; i++) {
        ss_http_server *expected = server;
        if (atomic_compare_exchange_strong(&registry[i], &expected, NULL)) return;
    }
}

static void free_server(ss_http_server *server) {
    unregister_server(server);
    pthread_mutex_destroy(&server->lock);
    if (server->owner == getpid()) close_owned(server);
    free(server);
}

/* Drops one hold on `request` (and, for the deferring caller's, on its server). */
static void release_request(ss_http_request *request, int with_server) {
    ss_http_server *server = request->server;
    int free_server_now = 0;
    pthread_mutex_lock(&server->lock);
    int free_request = --request->holds == 0;
    if (with_server) release_server_locked(server, &free_server_now);
    pthread_mutex_unlock(&server->lock);
    if (free_request) {
        if (request->ready) server->mhd->MHD_destroy_response(request->ready);
        free(request);
    }
    if (free_server_now) free_server(server);
}

static void remove_deferred_locked(ss_http_server *server, ss_http_request *request) {
    for (ss_http_request **link = &server->deferred; *link; link = &(*link)->next) {
        if (*link == request) {
            *link = request->next;
            request->next = NULL;
            return;
        }
    }
}

static struct MHD_Response *make_response(const ss_libmicrohttpd *mhd, const char *const *headers, size_t header_count,
                                          const void *body, size_t length) {
    struct MHD_Response *response =
        mhd->MHD_create_response_from_buffer(length, (void *)(body ? body : ""), MHD_RESPMEM_MUST_COPY);
    if (!response) return NULL;
    for (size_t i = 0; headers && i < header_count; i++)
        mhd->MHD_add_response_header(response, headers[2 * i], headers[2 * i + 1]);
    return response;
}

/* Queues `response` (consumed) on the loop's thread. */
static enum MHD_Result queue(ss_http_request *request, unsigned status, struct MHD_Response *response) {
    const ss_libmicrohttpd *mhd = request->server->mhd;
    if (!response) return MHD_NO;
    enum MHD_Result result = mhd->MHD_queue_response(request->connection, status, response);
    mhd->MHD_destroy_response(response);
    return result;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **request_slot) {
    (void)version;
    (void)upload_data;
    ss_http_server *server = cls;
    ss_http_request *request = *request_slot;
    if (!request) {
        // Headers complete: dispatch now. A body is never read (the routes take none), so a
        // client cannot make the server read a large one.
        request = calloc(1, sizeof *request);
        if (!request) return MHD_NO;
        request->server = server;
        request->connection = connection;
        request->method = method;
        request->path = url;
        request->state = REQUEST_NEW;
        request->holds = 1;
        *request_slot = request;
        atomic_fetch_add(&work_under_way, 1);
        server->handler(server->context, request);
        atomic_fetch_sub(&work_under_way, 1);
        if (request->state == REQUEST_NEW) {
            static const char text[] = "the server gave no answer\n";
            request->state = REQUEST_ANSWERED;
            return queue(request, 500, make_response(server->mhd, NULL, 0, text, sizeof text - 1));
        }
        return request->state == REQUEST_ANSWERED && request->ready_status == 0 ? MHD_NO : MHD_YES;
    }
    pthread_mutex_lock(&server->lock);
    struct MHD_Response *ready = NULL;
    if (request->state == REQUEST_READY) {
        ready = request->ready;
        request->ready = NULL;
        request->state = REQUEST_ANSWERED;
    }
    pthread_mutex_unlock(&server->lock);
    if (ready) return queue(request, request->ready_status, ready);
    *upload_data_size = 0;
    return MHD_YES;
}

static void request_completed(void *cls, struct MHD_Connection *connection, void **request_slot,
                              enum MHD_RequestTerminationCode code) {
    (void)cls;
    (void)connection;
    (void)code;
    ss_http_request *request = *request_slot;
    if (!request) return;
    *request_slot = NULL;
    release_request(request, 0);
}

const char *ss_http_request_method(const ss_http_request *request) { return request->method ? request->method : ""; }

const char *ss_http_request_path(const ss_http_request *request) { return request->path ? request->path : ""; }

struct argument_visit {
    ss_http_argument_visitor visit;
    void *context;
};

static enum MHD_Result visit_argument(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                      const char *value, size_t value_size) {
    (void)kind;
    struct argument_visit *visit = cls;
    if (key) visit->visit(visit->context, key, key_size, value, value ? value_size : 0);
    return MHD_YES;
}

void ss_http_request_arguments(const ss_http_request *request, ss_http_argument_visitor visit, void *context) {
    struct argument_visit state = {visit, context};
    request->server->mhd->MHD_get_connection_values_n(request->connection, MHD_GET_ARGUMENT_KIND, visit_argument, &state);
}

const char *ss_http_request_header(const ss_http_request *request, const char *name) {
    return request->server->mhd->MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, name);
}

int ss_http_request_has_body(const ss_http_request *request) {
    const ss_libmicrohttpd *mhd = request->server->mhd;
    const char *length = mhd->MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length && strspn(length, "0") != strlen(length)) return 1;
    return mhd->MHD_lookup_connection_value(request->connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

void ss_http_request_respond(ss_http_request *request, unsigned status, const char *const *headers, size_t header_count,
                             const void *body, size_t length) {
    ss_http_server *server = request->server;
    struct MHD_Response *response = make_response(server->mhd, headers, header_count, body, length);
    if (request->state == REQUEST_NEW) {
        // In the handler's call, on the loop's thread. ready_status 0 tells access_handler the
        // queueing failed (the connection is then closed).
        request->state = REQUEST_ANSWERED;
        request->ready_status = queue(request, status, response) == MHD_YES ? status : 0;
        return;
    }
    pthread_mutex_lock(&server->lock);
    // A lost server's connections are not touched (libmicrohttpd's resume writes to a descriptor).
    if (request->state == REQUEST_DEFERRED && response && !atomic_load(&server->lost)) {
        request->ready = response;
        request->ready_status = status;
        request->state = REQUEST_READY;
        remove_deferred_locked(server, request);
        server->mhd->MHD_resume_connection(request->connection);
        response = NULL;
    }
    pthread_mutex_unlock(&server->lock);
    // Without a thread of its own libmicrohttpd wakes no loop on a resume: wake ours.
    wake_loop(server);
    // Answered by the server's stop meanwhile (or no memory for the response): dropped.
    if (response) server->mhd->MHD_destroy_response(response);
    release_request(request, 1);
}

int ss_http_request_defer(ss_http_request *request) {
    ss_http_server *server = request->server;
    if (request->state != REQUEST_NEW || atomic_load(&server->stopping) || atomic_load(&server->lost)) return -1;
    pthread_mutex_lock(&server->lock);
    server->mhd->MHD_suspend_connection(request->connection);
    request->state = REQUEST_DEFERRED;
    request->holds++;
    server->holds++;
    request->next = server->deferred;
    server->deferred = request;
    pthread_mutex_unlock(&server->lock);
    return 0;
}

static void wake_loop(ss_http_server *server) {
    // Checked first: once the program has the number, the byte would go into its file.
    if (!still_owned(server)) return;
    char byte = 1;
    while (write(server->wake[1], &byte, 1) < 0 && errno == EINTR) {}
}

static void set_error(char *error, size_t capacity, const char *message) {
    snprintf(error, capacity, "%s", message);
}

ss_http_server *ss_http_server_create(const int *fds, size_t count, ss_http_limits limits, ss_http_handler handler,
                                      void *context, char *error, size_t error_capacity) {
    const ss_libmicrohttpd *mhd = ss_libmicrohttpd_load();
    ss_http_server *server = NULL;
    if (!mhd) {
        set_error(error, error_capacity,
                  "cannot load libmicrohttpd.so.12 (apt-get install libmicrohttpd12); not listening");
        goto fail;
    }
    if (count == 0 || count > SS_HTTP_MAX_LISTENERS) {
        set_error(error, error_capacity, "too many or no listeners");
        goto fail;
    }
    server = calloc(1, sizeof *server);
    if (!server || pipe2(server->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        set_error(error, error_capacity, "cannot make the server's wake pipe");
        if (server) server->wake[0] = server->wake[1] = -1;
        goto fail;
    }
    pthread_mutex_init(&server->lock, NULL);
    server->owner = getpid();
    own(server, server->wake[0]);
    own(server, server->wake[1]);
    server->mhd = mhd;
    server->handler = handler;
    server->context = context;
    server->holds = 1;
    for (size_t i = 0; i < count; i++) {
        struct MHD_OptionItem options[] = {
            {MHD_OPTION_LISTEN_SOCKET, fds[i], NULL},
            {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)limits.connection_limit, NULL},
            {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)limits.connection_timeout_seconds, NULL},
            {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)limits.connection_memory_limit, NULL},
            {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)request_completed, NULL},
            {MHD_OPTION_END, 0, NULL},
        };
        struct MHD_Daemon *daemon = mhd->MHD_start_daemon(MHD_ALLOW_SUSPEND_RESUME | MHD_USE_EPOLL, 0, NULL, NULL,
                                                          access_handler, server, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
        if (!daemon) {
            snprintf(error, error_capacity, "libmicrohttpd could not serve listener %zu (%s)", i + 1, strerror(errno));
            for (size_t j = i; j < count; j++) close(fds[j]);
            goto fail_started;
        }
        server->daemons[server->count++] = daemon;
        const union MHD_DaemonInfo *info = mhd->MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
        own(server, fds[i]);
        own(server, info ? info->epoll_fd : -1);
    }
    register_server(server);
    return server;
fail:
    for (size_t i = 0; i < count; i++) close(fds[i]);
fail_started:
    if (server) {
        for (size_t i = 0; i < server->count; i++) mhd->MHD_stop_daemon(server->daemons[i]);
        if (server->wake[0] >= 0 && server->wake[1] >= 0) free_server(server);
        else free(server);
    }
    return NULL;
}

static uint64_t now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
}

/* Waits for activity (at most `limit_ms`) and lets every daemon work, if its descriptors are
 * still its own before the wait and again after it (the program may close and reuse a number
 * meanwhile: a wait on a closed one returns at once, or sees the pipe's writer gone). */
static void serve_once(ss_http_server *server, int limit_ms) {
    const ss_libmicrohttpd *mhd = server->mhd;
    if (!still_owned(server)) return;
    struct pollfd fds[SS_HTTP_MAX_LISTENERS + 1];
    int wait_ms = limit_ms;
    for (size_t i = 0; i < server->count; i++) {
        const union MHD_DaemonInfo *info = mhd->MHD_get_daemon_info(server->daemons[i], MHD_DAEMON_INFO_EPOLL_FD);
        fds[i] = (struct pollfd){.fd = info ? info->epoll_fd : -1, .events = POLLIN};
        MHD_UNSIGNED_LONG_LONG timeout;
        if (mhd->MHD_get_timeout(server->daemons[i], &timeout) == MHD_YES && timeout < (MHD_UNSIGNED_LONG_LONG)wait_ms)
            wait_ms = (int)timeout;
    }
    fds[server->count] = (struct pollfd){.fd = server->wake[0], .events = POLLIN};
    if (poll(fds, server->count + 1, wait_ms) < 0 && errno != EINTR) usleep(1000);
    if (!still_owned(server)) return;
    if (fds[server->count].revents & POLLIN) {
        char bytes[64];
        while (read(server->wake[0], bytes, sizeof bytes) > 0) {}
    }
    for (size_t i = 0; i < server->count; i++) mhd->MHD_run(server->daemons[i]);
}

/* A lost server's daemons are left as they are (stopping them would close numbers that are the
 * program's now, and libmicrohttpd aborts the process when such a close fails). Returns 1, what
 * ss_http_server_run says of a lost server. */
static int abandon(ss_http_server *server) {
    server->count = 0;
    return 1;
}

int ss_http_server_run(ss_http_server *server) {
    while (!atomic_load(&server->stopping) && !atomic_load(&server->lost)) serve_once(server, SS_HTTP_MAX_WAIT_MS);
    if (!still_owned(server)) return abandon(server);
    // Deferred requests get a 503 now (their callers' later answers are dropped), and a moment
    // to be sent, so that no connection is suspended when the daemons stop.
    static const char text[] = "the profiling server is stopping\n";
    static const char *const headers[] = {"Content-Type", "text/plain; charset=utf-8"};
    int drained = 0;
    pthread_mutex_lock(&server->lock);
    while (server->deferred) {
        ss_http_request *request = server->deferred;
        server->deferred = request->next;
        request->next = NULL;
        request->ready = make_response(server->mhd, headers, 1, text, sizeof text - 1);
        request->ready_status = 503;
        request->state = REQUEST_READY;
        server->mhd->MHD_resume_connection(request->connection);
        drained = 1;
    }
    pthread_mutex_unlock(&server->lock);
    if (drained) {
        uint64_t deadline = now_ms() + SS_HTTP_DRAIN_MS;
        for (uint64_t now = now_ms(); now < deadline && !atomic_load(&server->lost); now = now_ms())
            serve_once(server, (int)(deadline - now));
    }
    if (!still_owned(server)) return abandon(server);
    for (size_t i = 0; i < server->count; i++) server->mhd->MHD_stop_daemon(server->daemons[i]);
    server->count = 0;
    server->owned_count = SS_HTTP_WAKE_ENDS; /* the listeners and epolls are closed: only the wake pipe is left */
    return 0;
}

void ss_http_server_stop(ss_http_server *server) {
    atomic_store(&server->stopping, 1);
    wake_loop(server);
}

void ss_http_server_release(ss_http_server *server) {
    int free_it = 0;
    pthread_mutex_lock(&server->lock);
    release_server_locked(server, &free_it);
    pthread_mutex_unlock(&server->lock);
    if (free_it) free_server(server);
}


int ss_http_server_lost(ss_http_server *server) { return atomic_load(&server->lost); }

void ss_http_work_begin(void) { atomic_fetch_add(&work_under_way, 1); }

void ss_http_work_end(void) { atomic_fetch_sub(&work_under_way, 1); }

int ss_http_work_under_way(void) { return atomic_load(&work_under_way); }
