/*
 * Where a thread of this process is blocked, as the kernel shows it in
 * /proc/self/task/TID/syscall: for the sampler thread's walks of sleeping threads in wall mode,
 * read into a buffer on the stack and parsed here, without the allocations a text read costs.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parses the hexadecimal number "0x…" at *cursor and moves past it and the blank after it. */
static int parse_hex(const char **cursor, uint64_t *value) {
    const char *at = *cursor;
    if (at[0] != '0' || at[1] != 'x') return 0;
    at += 2;
    uint64_t parsed = 0;
    int digits = 0;
    for (;; at++, digits++) {
        char c = *at;
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (digit < 0) break;
        parsed = parsed << 4 | (uint64_t)digit;
    }
    if (digits == 0 || digits > 16) return 0;
    while (*at == ' ' || *at == '\n') at++;
    *cursor = at;
    *value = parsed;
    return 1;
}

int ss_thread_blocked_position(int32_t tid, ss_blocked_position *position) {
    char path[48], text[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t length;
    do length = read(fd, text, sizeof text - 1);
    while (length < 0 && errno == EINTR);
    close(fd);
    if (length <= 0) return -1;
    text[length] = 0;
    if (strncmp(text, "running", 7) == 0) return 0;
    /* "NR ARG1 … ARG6 SP PC", or "-1 SP PC" when blocked outside a system call. */
    memset(position, 0, sizeof *position);
    const char *cursor = text;
    char *end;
    long number = strtol(cursor, &end, 10);
    if (end == cursor) return 0;
    position->syscall = number;
    cursor = end;
    while (*cursor == ' ') cursor++;
    uint64_t words[8];
    int count = 0;
    while (count < 8 && parse_hex(&cursor, &words[count])) count++;
    if (*cursor != 0 || (number >= 0 ? count != 8 : count != 2)) return 0;
    for (int i = 0; i + 2 < count; i++) position->arguments[i] = words[i];
    position->stack_pointer = (uintptr_t)words[count - 2];
    position->program_counter = (uintptr_t)words[count - 1];
    return position->stack_pointer != 0 && position->program_counter != 0;
}
