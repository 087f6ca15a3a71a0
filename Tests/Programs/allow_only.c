/*
 * Runs COMMAND behind a seccomp filter that allows only the system calls listed and kills the
 * process for any other, as systemd's SystemCallFilter= does with its default action:
 *   allow_only NUMBER,NUMBER,... COMMAND [ARGUMENT...]
 * The numbers are x86-64 system call numbers (the tests list systemd's @system-service set with
 * `systemd-analyze syscall-filter` and number it from <asm/unistd_64.h>).
 */
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { MAXIMUM_CALLS = 1024 };

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: allow_only NUMBER,NUMBER,... COMMAND [ARGUMENT...]\n");
        return 2;
    }
    static struct sock_filter filter[2 * MAXIMUM_CALLS + 5];
    size_t length = 0;
    /* Another architecture's calls (x32, i386) have other numbers: killed. */
    filter[length++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    filter[length++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    filter[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    filter[length++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    size_t calls = 0;
    for (char *next = argv[1]; *next && calls < MAXIMUM_CALLS; calls++) {
        char *end;
        long number = strtol(next, &end, 10);
        if (end == next || number < 0) {
            fprintf(stderr, "allow_only: not a system call number list: %s\n", argv[1]);
            return 2;
        }
        filter[length++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)number, 0, 1);
        filter[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
        next = *end == ',' ? end + 1 : end;
    }
    filter[length++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    struct sock_fprog program = {(unsigned short)length, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        perror("allow_only: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror("allow_only: exec");
    return 127;
}
