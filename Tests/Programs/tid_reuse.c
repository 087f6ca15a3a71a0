/* tid_reuse: a thread made with the raw clone system call (as a runtime that bypasses
 * pthread_create would) spins in `first_spin` for 0.4 s and exits; at once a second raw thread
 * is made with the same tid (the pid namespace's last pid is set just below it, so run this as
 * pid 1 of a new pid namespace: `unshare --pid --fork --mount-proc`) and spins in `reused_spin`
 * for 0.6 s. Prints `same_tid 1` when the tid was reused.
 * Build: gcc -O2 -o tid_reuse tid_reuse.c */
#define _GNU_SOURCE
#include "workload.h"
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { STACK_BYTES = 256 * 1024 };
static volatile int finished;
static volatile uint64_t sink;

/* Raw threads share the creator's TLS: they call nothing that touches errno or locks. */
SAMPLED_FUNCTION uint64_t first_spin(double seconds) { return burn_cpu(seconds, 0x1111); }
SAMPLED_FUNCTION uint64_t reused_spin(double seconds) { return burn_cpu(seconds, 0x2222); }

static int first_body(void *unused) {
    (void)unused;
    sink += first_spin(0.4);
    __atomic_store_n(&finished, 1, __ATOMIC_RELEASE);
    syscall(SYS_exit, 0);
    return 0;
}

static pid_t wanted_tid;

/* Spins only on the wanted tid: a try that got another one ends at once and is made again. */
static int reused_body(void *unused) {
    (void)unused;
    if (syscall(SYS_gettid) == wanted_tid) sink += reused_spin(0.6);
    __atomic_store_n(&finished, 2, __ATOMIC_RELEASE);
    syscall(SYS_exit, 0);
    return 0;
}

/* Starts a raw thread; the kernel clears *tid when it exits (CLONE_CHILD_CLEARTID). */
static pid_t start_raw_thread(int (*body)(void *), pid_t *tid) {
    char *stack = malloc(STACK_BYTES);
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID |
                CLONE_CHILD_CLEARTID;
    return clone(body, stack + STACK_BYTES, flags, NULL, tid, NULL, tid);
}

static void wait_for_exit(volatile pid_t *tid) {
    while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) != 0) syscall(SYS_futex, tid, 0 /* FUTEX_WAIT */, *tid, NULL);
}

int main(void) {
    static pid_t first_tid, reused_tid;
    pid_t first = start_raw_thread(first_body, &first_tid);
    if (first <= 0) return 2;
    wait_for_exit(&first_tid);
    /* The kernel clears the tid a moment before it frees it, and the profiler may take a tid
     * for a thread of its own meanwhile: try again until the tid is handed out again. */
    wanted_tid = first;
    pid_t reused = 0;
    for (int attempt = 0; attempt < 200 && reused != first; attempt++) {
        FILE *last = fopen("/proc/sys/kernel/ns_last_pid", "w");
        if (!last) return 3;
        fprintf(last, "%d", first - 1);
        fclose(last);
        reused = start_raw_thread(reused_body, &reused_tid);
        if (reused <= 0) return 4;
        wait_for_exit(&reused_tid);
        if (reused != first) usleep(1000);
    }
    printf("same_tid %d\n", reused == first);
    return 0;
}
