/* A field of a process's /proc/PID/stat: never in signal context. */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long ss_proc_stat_field(long pid, int field) {
    char path[48], text[1024];
    if (pid > 0) snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    else snprintf(path, sizeof path, "/proc/self/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0 || field < 3) return 0;
    text[length] = 0;
    const char *at = strrchr(text, ')'); /* after the command name, which may hold spaces */
    for (int index = 2; at && index < field; index++) at = strchr(at + 1, ' ');
    return at ? strtol(at + 1, NULL, 10) : 0;
}
