/* faults: signals the profiler also handles (SIGSEGV, SIGBUS) must reach the program as
 * without the profiler. argv[1]:
 *   handled   installs a SIGSEGV handler that jumps back, faults 3 times, prints `caught 3`
 *             and `handler_reported yes|no` (what sigaction says), exits 0;
 *   unhandled writes through a null pointer: dies of SIGSEGV;
 *   jit       runs code in anonymous memory (no unwind info) that points the frame
 *             pointer at unmapped memory while it spins, for argv[2] seconds; prints
 *             `jit done`, exits 0. A profiler that trusts that frame pointer reads
 *             unmapped memory inside its handler.
 * Build: gcc -O2 -o faults faults.c */
#define _GNU_SOURCE
#include "workload.h"
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf recover;
static volatile sig_atomic_t caught;

static void on_segv(int signo) {
    (void)signo;
    caught++;
    siglongjmp(recover, 1);
}

static int handled(void) {
    struct sigaction action, reported;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_segv;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGSEGV, NULL, &reported);
    for (int i = 0; i < 3; i++) {
        if (sigsetjmp(recover, 1) == 0) *(volatile int *)(uintptr_t)(16 + i) = 1;
    }
    printf("caught %d\nhandler_reported %s\n", (int)caught, reported.sa_handler == on_segv ? "yes" : "no");
    return caught == 3 ? 0 : 3;
}

/* push rbp; movabs rbp, 0x10; mov rcx, imm32; loop: dec rcx; jnz loop; pop rbp; ret */
static const unsigned char spin_code[] = {
    0x55, 0x48, 0xbd, 0x10, 0, 0, 0, 0, 0, 0, 0,
    0x48, 0xc7, 0xc1, 0x00, 0x00, 0x10, 0x00,
    0x48, 0xff, 0xc9, 0x75, 0xfb, 0x5d, 0xc3,
};

static int jit(double seconds) {
    void *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return 4;
    memcpy(code, spin_code, sizeof spin_code);
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 4;
    void (*spin)(void) = (void (*)(void))code;
    const double end = thread_cpu_seconds() + seconds;
    while (thread_cpu_seconds() < end) spin();
    printf("jit done\n");
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "handled";
    if (strcmp(mode, "handled") == 0) return handled();
    if (strcmp(mode, "unhandled") == 0) { *(volatile int *)(uintptr_t)8 = 1; return 0; }
    if (strcmp(mode, "jit") == 0) return jit(argc > 2 ? strtod(argv[2], NULL) : 1.0);
    return 2;
}
