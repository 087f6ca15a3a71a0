/*
 * Where a thread of this process is blocked, as the kernel shows it in
 * /proc/self/task/TID/syscall: for the sampler thread's walks of sleeping threads in wall mode,
 * read into a buffer on the stack and parsed here, without the allocations a text read costs.
 *
 * A thread walked again and again (one whose every tick lands in a new short sleep) has its
 * file held open and read with pread: 2.6 us, against 8.7 us to open, read and close it (4
 * sleeping threads, this machine). Held files are descriptors in the program's process: they
 * are placed among the counters and counted with them (ss_engine_place_descriptor: the same
 * bound, above FD_SETSIZE when the limit has room), and take at most a quarter of that room
 * (and HELD_FILES), so that threads' counters keep the rest; each is known by its thread and
 * its inode and checked with fstat before every read and close (the program may have closed
 * the number and opened a file of its own there: that file is left alone and the hold
 * forgotten); a forked child closes its copies where they are still ours. A held file that
 * cannot be read (its thread exited) is given up, and the thread read through its path. Used
 * by one thread at a time: the sampler's.
 */
#define _GNU_SOURCE
#include "engine_internal.h"
#include "sampling_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

enum { HELD_FILES = 64 };

/* A file held open for a thread: its descriptor, thread and inode. */
static struct held_file {
    int in_use;
    int fd;
    int32_t tid;
    uint64_t device, inode;
} held[HELD_FILES];
static int held_count;

/* Parses the file's text: 1 with `position` set, 0 while the thread runs (or the text is not
 * understood). */
static int parse_position(const char *text, ss_blocked_position *position) {
    if (strncmp(text, "running", 7) == 0) return 0;
    if (strncmp(text, "-1 0x0 0x0", 10) == 0) return -1; /* no user context: the thread has exited (a zombie) */
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

/* Reads the file at `fd` from its start and parses it; -1 if it cannot be read (the thread exited). */
static int read_position(int fd, ss_blocked_position *position) {
    char text[256];
    ssize_t length;
    do length = pread(fd, text, sizeof text - 1, 0);
    while (length < 0 && errno == EINTR);
    if (length <= 0) return -1;
    text[length] = 0;
    return parse_position(text, position);
}

static int open_syscall_file(int32_t tid, ss_file_identity *identity) {
    char path[48];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    return ss_borrowed_open(path, 0, identity);
}

int ss_thread_blocked_position(int32_t tid, ss_blocked_position *position) {
    ss_file_identity identity;
    int fd = open_syscall_file(tid, &identity);
    if (fd < 0) return -1;
    int found = read_position(fd, position);
    ss_borrowed_close(fd, &identity);
    return found;
}

/* Whether the held file `slot` is still at its number, as it was opened. */
static int still_held(int slot) {
    struct stat status;
    return fstat(held[slot].fd, &status) == 0 && (uint64_t)status.st_dev == held[slot].device &&
           (uint64_t)status.st_ino == held[slot].inode;
}

/* Forgets the held file `slot`, closing it only if `close_it` and it is still ours. */
static void forget_held(int slot, int close_it) {
    if (!held[slot].in_use) return;
    if (close_it && still_held(slot)) close(held[slot].fd);
    held[slot].in_use = 0;
    held_count--;
    ss_engine_release_descriptor();
}

/* Holds `tid`'s file open in a free slot: the slot, SS_HELD_FILE_NONE when none is free now,
 * or SS_HELD_FILE_REFUSED (no room among the engine's descriptors, or no such thread). */
static int hold(int32_t tid) {
    int first, room = ss_perf_counter_room(&first);
    if (held_count >= HELD_FILES || held_count >= room / 4) return SS_HELD_FILE_NONE;
    int slot = 0;
    while (held[slot].in_use) slot++;
    /* Known by the file opened, before it moves: the number it moves to is not the program's yet. */
    ss_file_identity identity;
    int fd = open_syscall_file(tid, &identity);
    if (fd < 0) return SS_HELD_FILE_REFUSED;
    fd = ss_engine_place_descriptor(fd, &identity);
    if (fd < 0) return SS_HELD_FILE_REFUSED;
    held[slot] = (struct held_file){1, fd, tid, identity.device, identity.inode};
    held_count++;
    return slot;
}

int ss_thread_blocked_position_held(int32_t tid, int *slot, ss_blocked_position *position) {
    if (*slot == SS_HELD_FILE_NONE) *slot = hold(tid);
    if (*slot >= 0) {
        if (*slot < HELD_FILES && held[*slot].in_use && held[*slot].tid == tid && still_held(*slot)) {
            int found = read_position(held[*slot].fd, position);
            if (found >= 0) return found;
            forget_held(*slot, 1); /* its thread exited: whether the tid did is for the path to say */
        } else if (*slot < HELD_FILES && held[*slot].in_use && held[*slot].tid == tid) {
            forget_held(*slot, 0); /* the program's file now: left open, held again at the next look */
        }
        *slot = SS_HELD_FILE_NONE;
    }
    return ss_thread_blocked_position(tid, position);
}

void ss_held_file_close(int slot) {
    if (slot >= 0 && slot < HELD_FILES) forget_held(slot, 1);
}

void ss_held_files_forget_after_fork(void) {
    for (int slot = 0; slot < HELD_FILES; slot++) forget_held(slot, 1);
}
