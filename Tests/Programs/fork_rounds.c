/*
 * A service that forks short-lived children, for a daemon of the profiler's that runs in each
 * forked process. Every 100 ms it forks a child that waits 150 ms, says whether its own daemon
 * socket (/tmp/stacksampler-UID/PID.sock) is there, and exits. Once file AFTER exists it forks
 * three more, one at a time, and exits 0 (or after 30 s without AFTER, 2).
 *
 * prints: one line per child: `child N daemon yes|no` (N counts from 1; the last three `after`)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(const char *label, int number) {
    usleep(150000);
    char path[128];
    snprintf(path, sizeof path, "/tmp/stacksampler-%u/%d.sock", (unsigned)getuid(), (int)getpid());
    printf("%s %d daemon %s\n", label, number, access(path, F_OK) == 0 ? "yes" : "no");
    fflush(stdout);
    exit(0); /* exit handlers run: the child's daemon removes its socket */
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    int number = 0;
    for (int round = 0; round < 300 && access(argv[1], F_OK) != 0; round++) {
        if (fork() == 0) child("child", ++number);
        ++number;
        usleep(100000);
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
    }
    if (access(argv[1], F_OK) != 0) return 2;
    while (wait(NULL) > 0) {}
    for (int i = 1; i <= 3; i++) {
        if (fork() == 0) child("after", i);
        wait(NULL);
    }
    return 0;
}
