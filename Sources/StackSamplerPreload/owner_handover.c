/*
 * A program started by a profiled one, under the same daemon settings, whose profiled ancestor
 * only started it: a wrapper (`timeout`, a shell script, an init shim) in front of the service.
 * The address and the profiling go to the service. The new program asks its owner, on the
 * owner's default socket, with one HTTP request written by hand (no library is loaded for it:
 * every program a profiled service starts passes here), and the owner, if it has done nothing
 * but start a child and wait, gives its listen addresses up (ListenRelease) before it answers.
 */
#define _GNU_SOURCE
#include "preload_internal.h"
#include "stacksampler_engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

enum { MAXIMUM_DEPTH = 16, ANSWER_SECONDS = 2 };

/* Whether `ancestor` started this process, directly or through processes between them. */
static int is_ancestor(long ancestor) {
    long pid = getpid();
    for (int depth = 0; depth < MAXIMUM_DEPTH && pid > 1; depth++) {
        pid = ss_proc_stat_field(pid, 4);
        if (pid == ancestor) return 1;
    }
    return 0;
}

int ss_take_over_from_owner(long owner) {
    if (!is_ancestor(owner)) return 0;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "/tmp/stacksampler-%u/%ld.sock", (unsigned)getuid(), owner);
    if (access(address.sun_path, F_OK) != 0) return 0;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    struct timeval bound = {ANSWER_SECONDS, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    char request[160], answer[64] = {0};
    int length = snprintf(request, sizeof request,
                          "POST /debug/stacksampler/listen/release?pid=%ld HTTP/1.0\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n",
                          (long)getpid());
    int taken = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 && write(fd, request, (size_t)length) == length
                && read(fd, answer, sizeof answer - 1) > 12 && strncmp(answer, "HTTP/1.", 7) == 0 && strncmp(answer + 8, " 200", 4) == 0;
    close(fd);
    return taken;
}
