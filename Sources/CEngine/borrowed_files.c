/*
 * Files the profiler opens for a moment in the program's process (/proc files, a counter before
 * it moves to its place). The kernel gives each the lowest free number, which the program may
 * close meanwhile (a daemon closing every descriptor) and reuse for a file of its own: so each
 * is known by the file it is (device and inode, read as it is opened), read only positionally
 * (pread: a number that has become the program's pipe or socket fails, a file of its own keeps
 * its offset), and closed only if that number is still that file.
 */
#define _GNU_SOURCE
#include "engine_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int ss_borrowed_identify(int fd, ss_file_identity *identity) {
    struct stat status;
    if (fstat(fd, &status) != 0) return -1;
    identity->device = (uint64_t)status.st_dev;
    identity->inode = (uint64_t)status.st_ino;
    return 0;
}

int ss_borrowed_is(int fd, const ss_file_identity *identity) {
    ss_file_identity now;
    return ss_borrowed_identify(fd, &now) == 0 && now.device == identity->device && now.inode == identity->inode;
}

int ss_borrowed_open(const char *path, int flags, ss_file_identity *identity) {
    int fd = open(path, flags | O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (ss_borrowed_identify(fd, identity) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void ss_borrowed_close(int fd, const ss_file_identity *identity) {
    if (fd >= 0 && ss_borrowed_is(fd, identity)) close(fd);
}

long ss_borrowed_read_directory(int fd, const ss_file_identity *identity, void *buffer, size_t size) {
    if (!ss_borrowed_is(fd, identity)) return -1;
    return syscall(SYS_getdents64, fd, buffer, size);
}
