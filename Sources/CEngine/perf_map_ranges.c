/*
 * The code a runtime declares as its own in /tmp/perf-PID.map ("START SIZE name" lines, in hex:
 * `node --perf-basic-prof`, `DOTNET_PerfMapEnabled=1`) where it lies inside a loaded module:
 * V8's builtins, which run from node's own text without CFI, and keep frame pointers as the
 * code V8 generates does. Code in anonymous memory is in code_ranges.c's table from the maps
 * already. Read by the sampler thread (code_ranges.c's refresh), never in the handler: only what
 * the file grew by since the last read (at most READ_LIMIT bytes a time), from a regular file
 * of this user's only (/tmp is everyone's). Adjacent ranges are merged; past RANGE_CAPACITY the
 * rest is not kept (their walks end early, counted).
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

enum {
    RANGE_CAPACITY = 1024,
    CHUNK_BYTES = 16384,
    READ_LIMIT = 4 << 20,
    MERGE_GAP = 256, /* builtins are aligned: the padding between two is not another's code */
};

static ss_code_range ranges[RANGE_CAPACITY];
static size_t range_count;
static pid_t read_for;      /* the process whose file was read (a forked child starts again) */
static off_t read_offset;   /* bytes of whole lines read so far */
static char chunk[CHUNK_BYTES + 1];

/* Adds [low, high), merged with the ranges it touches. */
static void add_range(uintptr_t low, uintptr_t high) {
    size_t at = 0;
    while (at < range_count && ranges[at].high + MERGE_GAP < low) at++;
    if (at < range_count && ranges[at].low <= high + MERGE_GAP) {
        if (low < ranges[at].low) ranges[at].low = low;
        if (high > ranges[at].high) ranges[at].high = high;
        while (at + 1 < range_count && ranges[at + 1].low <= ranges[at].high + MERGE_GAP) {
            if (ranges[at + 1].high > ranges[at].high) ranges[at].high = ranges[at + 1].high;
            memmove(&ranges[at + 1], &ranges[at + 2], (range_count - at - 2) * sizeof ranges[0]);
            range_count--;
        }
        return;
    }
    if (range_count == RANGE_CAPACITY) return;
    memmove(&ranges[at + 1], &ranges[at], (range_count - at) * sizeof ranges[0]);
    ranges[at] = (ss_code_range){low, high};
    range_count++;
}

/* Parses the whole lines of `text` (`length` bytes); returns the bytes they take. */
static size_t parse_lines(char *text, size_t length, int (*in_module)(uintptr_t low, uintptr_t high)) {
    size_t used = 0;
    for (;;) {
        char *end = memchr(text + used, '\n', length - used);
        if (!end) return used;
        *end = '\0';
        unsigned long start, size;
        if (sscanf(text + used, "%lx %lx", &start, &size) == 2 && size > 0 && start + size > start &&
            in_module(start, start + size))
            add_range(start, start + size);
        used = (size_t)(end - text) + 1;
    }
}

void ss_perf_map_read(int (*in_module)(uintptr_t low, uintptr_t high)) {
    pid_t pid = getpid();
    if (read_for != pid) {
        read_for = pid;
        read_offset = 0;
        range_count = 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat status;
    if (fstat(fd, &status) != 0 || !S_ISREG(status.st_mode) || status.st_uid != geteuid()) {
        close(fd);
        return;
    }
    if (status.st_size < read_offset) { /* written anew */
        read_offset = 0;
        range_count = 0;
    }
    for (off_t limit = read_offset + READ_LIMIT; read_offset < limit;) {
        ssize_t got = pread(fd, chunk, CHUNK_BYTES, read_offset);
        if (got <= 0) break;
        size_t used = parse_lines(chunk, (size_t)got, in_module);
        if (used == 0 && got < CHUNK_BYTES) break; /* a line still being written */
        read_offset += used > 0 ? (off_t)used : got; /* a line longer than a chunk is skipped */
    }
    close(fd);
}

size_t ss_perf_map_ranges(const ss_code_range **found) {
    *found = ranges;
    return range_count;
}
