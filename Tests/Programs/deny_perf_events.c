/*
 * Runs COMMAND with perf_event_open refused by a seccomp filter installed before the exec, as
 * the sandboxes users run in refuse it:
 *   deny_perf_events [--kill | --errno EACCES|EPERM|ENOSYS|ENODEV] COMMAND [ARGUMENT...]
 * --errno (EACCES by default): the call fails with that errno (a perf_event_paranoid of 3 or 4
 * gives EACCES, Docker's and Kubernetes' default profiles EPERM, Podman's ENOSYS, gVisor ENODEV).
 * --kill: the process that makes the call is killed with SIGSYS, as under systemd's
 * SystemCallFilter=@system-service, whose default action is that.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The errno named `name`, or 0. */
static int errno_named(const char *name) {
    static const struct { const char *name; int value; } known[] = {
        {"EACCES", EACCES}, {"EPERM", EPERM}, {"ENOSYS", ENOSYS}, {"ENODEV", ENODEV}, {"EINVAL", EINVAL}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].name, name) == 0) return known[i].value;
    return 0;
}

int main(int argc, char **argv) {
    unsigned int action = SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA);
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--kill") == 0) {
        action = SECCOMP_RET_KILL_PROCESS;
        first = 2;
    } else if (argc > 2 && strcmp(argv[1], "--errno") == 0) {
        int value = errno_named(argv[2]);
        if (!value) {
            fprintf(stderr, "deny_perf_events: unknown errno %s (EACCES, EPERM, ENOSYS, ENODEV, EINVAL)\n", argv[2]);
            return 2;
        }
        action = SECCOMP_RET_ERRNO | ((unsigned int)value & SECCOMP_RET_DATA);
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: deny_perf_events [--kill | --errno NAME] COMMAND [ARGUMENT...]\n");
        return 2;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("deny_perf_events: seccomp");
        return 2;
    }
    execvp(argv[first], argv + first);
    perror("deny_perf_events: exec");
    return 127;
}
