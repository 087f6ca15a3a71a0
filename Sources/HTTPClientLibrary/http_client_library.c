/* Loads libcurl privately, once, and makes whole requests through it (http_client_library.h). */
#include "http_client_library.h"

#include "private_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Thread-safe since 7.84; done once, at the load, so that no request races it. */
static const char *initialize(const void *table) {
    const ss_libcurl *curl = table;
    CURLcode status = curl->curl_global_init(CURL_GLOBAL_DEFAULT);
    return status == CURLE_OK ? NULL : curl->curl_easy_strerror(status);
}

static ss_libcurl libcurl_table;
static ss_private_library libcurl =
    SS_PRIVATE_LIBRARY("libcurl.so.4", "libcurl4", SS_LIBCURL_FUNCTIONS, libcurl_table, initialize);

const ss_libcurl *ss_libcurl_load(void) { return ss_private_library_load(&libcurl); }

const char *ss_libcurl_load_error(void) { return ss_private_library_error(&libcurl); }

/* The response body as it arrives. */
typedef struct {
    unsigned char *bytes;
    size_t length, capacity, limit;
    int too_large;
} body_buffer;

static size_t append_body(char *data, size_t size, size_t count, void *opaque) {
    body_buffer *buffer = opaque;
    size_t length = size * count;
    if (buffer->limit && buffer->length + length > buffer->limit) {
        buffer->too_large = 1;
        return 0;
    }
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->length + length) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (!grown) return 0;
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
    return length;
}

/* Ends the transfer once its cancel flag is set. */
static int check_cancel(void *opaque, curl_off_t total_down, curl_off_t now_down, curl_off_t total_up, curl_off_t now_up) {
    (void)total_down, (void)now_down, (void)total_up, (void)now_up;
    return __atomic_load_n((const int *)opaque, __ATOMIC_ACQUIRE) ? 1 : 0;
}

void ss_http_cancel(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }

#define SET(option, value) \
    if (status == CURLE_OK) status = curl->curl_easy_setopt(handle, option, value)

int ss_http_perform(const ss_http_request *request, ss_http_response *response) {
    memset(response, 0, sizeof *response);
    const ss_libcurl *curl = ss_libcurl_load();
    if (!curl) {
        snprintf(response->error, sizeof response->error, "%s", ss_libcurl_load_error());
        return -1;
    }
    CURL *handle = curl->curl_easy_init();
    if (!handle) {
        snprintf(response->error, sizeof response->error, "libcurl could not make a request handle");
        return -1;
    }
    char curl_error[CURL_ERROR_SIZE] = "";
    body_buffer buffer = {.limit = request->max_response_bytes};
    struct curl_slist *headers = NULL;
    int failed = 0;
    /* No 100-continue round trip before a large body: the receiver gets the body at once. */
    struct curl_slist *grown = curl->curl_slist_append(NULL, "Expect:");
    headers = grown;
    for (size_t i = 0; grown && i < request->header_count; i++) {
        grown = curl->curl_slist_append(headers, request->headers[i]);
        if (grown) headers = grown;
    }
    if (!grown) {
        snprintf(response->error, sizeof response->error, "out of memory for the request's headers");
        failed = 1;
    }

    CURLcode status = CURLE_OK;
    SET(CURLOPT_ERRORBUFFER, curl_error);
    /* A process-wide SIGALRM for DNS timeouts would reach the program (and the profiler's wall mode). */
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_URL, request->url);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    if (request->unix_socket_path) SET(CURLOPT_UNIX_SOCKET_PATH, request->unix_socket_path);
    if (request->connect_timeout_ms > 0) SET(CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    if (request->total_timeout_ms > 0) SET(CURLOPT_TIMEOUT_MS, request->total_timeout_ms);
    SET(CURLOPT_HTTPHEADER, headers);
    if (request->cancel) {
        SET(CURLOPT_XFERINFOFUNCTION, check_cancel);
        SET(CURLOPT_XFERINFODATA, (void *)request->cancel);
        SET(CURLOPT_NOPROGRESS, 0L);
    }
    SET(CURLOPT_WRITEFUNCTION, append_body);
    SET(CURLOPT_WRITEDATA, &buffer);
    if (strcmp(request->method, "POST") == 0) {
        SET(CURLOPT_POST, 1L);
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
        SET(CURLOPT_POSTFIELDS, request->body_length ? request->body : "");
    } else if (strcmp(request->method, "GET") != 0) {
        SET(CURLOPT_CUSTOMREQUEST, request->method);
    }
    if (!failed && status != CURLE_OK) {
        snprintf(response->error, sizeof response->error, "libcurl refused an option: %s", curl->curl_easy_strerror(status));
        failed = 1;
    }
    if (!failed) {
        status = curl->curl_easy_perform(handle);
        if (status != CURLE_OK) {
            if (status == CURLE_ABORTED_BY_CALLBACK)
                snprintf(response->error, sizeof response->error, "cancelled");
            else if (buffer.too_large)
                snprintf(response->error, sizeof response->error, "the response is larger than %zu bytes",
                         request->max_response_bytes);
            else
                snprintf(response->error, sizeof response->error, "%s",
                         curl_error[0] ? curl_error : curl->curl_easy_strerror(status));
            failed = 1;
        } else {
            curl->curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response->status);
        }
    }
    curl->curl_easy_cleanup(handle);
    curl->curl_slist_free_all(headers);
    if (failed) {
        free(buffer.bytes);
        return 1;
    }
    response->body = buffer.bytes;
    response->body_length = buffer.length;
    return 0;
}

void ss_http_response_free(ss_http_response *response) {
    free(response->body);
    response->body = NULL;
    response->body_length = 0;
}
